"""Decoding of a capability response, shared by both guest bridges.

The native bridge (_agent_runtime_host.py, HTTP over a Unix socket) and the
WASI build's built-in _agent_runtime_host module both hand the host's answer
to decode(), so a script sees the same result bytes and the same typed
exceptions on either backend. Standard library only; no I/O here; the
json module's C accelerator (_json) is loaded on first use (every run
imports this module, few decode), the json package itself only to report
malformed text.
"""

__all__ = [
    "AgentRuntimeError",
    "CapabilityError",
    "AmbiguousOutcome",
    "decode",
    "canonical",
    "loads",
    "dumps",
    "MAX_FRAME_BYTES",
]

# The largest call frame the host accepts (SPEC section 5).
MAX_FRAME_BYTES = 1 << 20


# The exception types are defined here, where both bridges decode, but
# their documented home is agent_runtime (which re-exports them): that is
# the module a script imports, and the one a traceback, type(e) and
# pickle name.
_HOME = "agent_runtime"


class AgentRuntimeError(Exception):
    """Base of every typed refusal the runtime raises.

    error_code is a stable machine-readable string; message is the host's
    fixed text for that code (never guest input)."""

    __module__ = _HOME

    def __init__(self, error_code, message=""):
        super().__init__(error_code, message)
        self.error_code = str(error_code)
        self.message = str(message)

    def __str__(self):
        if self.message:
            return "%s: %s" % (self.error_code, self.message)
        return self.error_code


class CapabilityError(AgentRuntimeError):
    """The call was refused, denied or failed; the outcome is known."""

    __module__ = _HOME


class AmbiguousOutcome(AgentRuntimeError):
    """The host cannot say whether the handler acted. Never retried
    automatically: the guest decides what a second attempt would mean."""

    __module__ = _HOME


def _no_duplicates(pairs):
    obj = dict(pairs)
    if len(obj) != len(pairs):
        raise ValueError("duplicate key")
    return obj


def _no_constant(name):
    raise ValueError("non-finite number")


_INFINITIES = (float("inf"), float("-inf"))
# The run of digits an integer beyond a double's range needs, found in a
# frame translated by _digits (_codecs): every digit b"0", every other
# byte b" ".
_DIGIT_RUN = b"0" * 309


def _finite_float(text):
    """float(text), refusing a literal beyond the largest double, as the
    host's strict reader does (both round correctly, so they agree on
    which literal that is)."""
    value = float(text)
    if value in _INFINITIES:
        raise ValueError("number out of range")
    return value


def _finite_int(text):
    """int(text), refusing an integer literal beyond the largest double:
    the host reads every number as one."""
    if len(text) > 308 and float(text) in _INFINITIES:
        raise ValueError("number out of range")
    return int(text)


class _NotPlain(Exception):
    """A number the json module's C encoder would not write as RFC 8785
    does (a float, an integer beyond 2**53): decode takes the slow path."""


def _plain_int(text):
    value = int(text)
    if -(1 << 53) <= value <= (1 << 53):
        return value
    raise _NotPlain


def _no_float(text):
    raise _NotPlain


class _Hooks:
    """What _json.make_scanner reads of a json.JSONDecoder: strict,
    refusing duplicate keys and NaN/Infinity, with parse_int and
    parse_float."""

    def __init__(self, parse_int, parse_float):
        self.strict = True
        self.object_hook = None
        self.object_pairs_hook = _no_duplicates
        self.parse_float = parse_float
        self.parse_int = parse_int
        self.parse_constant = _no_constant


def _no_default(value):
    raise TypeError("Object of type %s is not JSON serializable" % type(value).__name__)


class _Loose:
    """What _json.make_scanner reads of json.loads's own decoder (the class
    is the context: none of its attributes is a function, so each reads
    as it is)."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = {
        "-Infinity": float("-inf"),
        "Infinity": float("inf"),
        "NaN": float("nan"),
    }.__getitem__


# Built on first use, then shared (they keep no state between calls), from
# the json module's C accelerator alone: the json package imports re,
# 20 ms of a run's first call under wazero.
_strict = None  # the strict scanner
_frame = None  # the same, refusing a float literal beyond a double's range
_frame_long = None  # and an integer literal too: for frames long enough
_digits = None  # bytes.translate's table for _DIGIT_RUN
_plain = None  # the same, refusing with _NotPlain what canonical() must write
_encode_plain = None  # RFC 8785 for values _plain decoded, in C: chunks
_encode_string = None  # json.dumps(s, ensure_ascii=False) for a str
_loose = None  # json.loads's scanner
_json = None  # the json package's C accelerator


def _codecs():
    global _strict, _frame, _frame_long, _digits, _plain, _encode_plain, _encode_string, _loose, _json
    if _encode_string is None:
        import _json

        _digits = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))

        _strict = _json.make_scanner(_Hooks(int, float))
        _frame = _json.make_scanner(_Hooks(int, _finite_float))
        _frame_long = _json.make_scanner(_Hooks(_finite_int, _finite_float))
        _plain = _json.make_scanner(_Hooks(_plain_int, _no_float))
        # json.JSONEncoder(ensure_ascii=False, separators=(",", ":"),
        # sort_keys=True).encode, without its check for cycles (a decoded
        # value has none; RecursionError bounds a deep one).
        _encode_plain = _json.make_encoder(
            None, _no_default, _json.encode_basestring, None, ":", ",", True, False, True
        )
        _encode_string = _json.encode_basestring
        _loose = _json.make_scanner(_Loose)


_WHITESPACE = " \t\n\r"


def loads(data):
    """json.loads(data) of UTF-8 bytes (agent_runtime's of the result
    decode returned), without the json package."""
    if _loose is None:
        _codecs()
    return _loads_strict(data.decode("utf-8", "surrogatepass"), _loose)


def dumps(value):
    """json.JSONEncoder(ensure_ascii=False, allow_nan=False,
    separators=(",", ":")).encode(value) (agent_runtime's), without the
    json package. The C encoder is made for each value, as JSONEncoder
    makes it: the markers that find a cycle must start empty, and an
    encoding that failed may have left some."""
    if _json is None:
        _codecs()
    if isinstance(value, str):  # as JSONEncoder.encode, without an encoder
        return _encode_string(value)
    encode = _json.make_encoder(
        {}, _no_default, _encode_string, None, ":", ",", False, False, False
    )
    return "".join(encode(value, 0))


def _loads_strict(text, scanner=None):
    """json.loads(text) with scanner (default _strict): the same value, or
    a ValueError where json.loads raises one."""
    if _strict is None:
        _codecs()
    if text.startswith("\ufeff"):  # as json.loads refuses it
        raise ValueError("unexpected byte order mark")
    scanner = scanner or _strict
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        try:
            value, end = scanner(text, start)
        except SystemError:
            # The C scanner raises json.decoder.JSONDecodeError, which it
            # finds only in sys.modules (else a SystemError): import it and
            # scan again for the error json.loads raises. Only malformed
            # text comes here.
            import json.decoder  # noqa: F401

            value, end = scanner(text, start)
    except StopIteration:
        raise ValueError("expecting a value") from None
    if end != len(text) and text[end:].lstrip(_WHITESPACE):
        raise ValueError("extra data")
    return value


_MAX_DEPTH = 64


def _depth_ok(value, depth=1):
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, dict):
        return all(_text_ok(k) and _depth_ok(v, depth + 1) for k, v in value.items())
    if isinstance(value, list):
        return all(_depth_ok(v, depth + 1) for v in value)
    if isinstance(value, str):
        return _text_ok(value)
    return True


def _text_ok(text):
    """False for a string with a lone surrogate (from a \\ud800 escape),
    which is not Unicode text: a key's as much as a value's."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _surely_shallow(text):
    """True when the JSON text cannot fail _depth_ok, found without a
    walk (under wazero every loop, in C too, is dear): a value inside 64
    containers takes at least 129 characters and 64 brackets, and only a
    \\u escape makes a lone surrogate."""
    if "\\u" in text:
        return False
    return len(text) <= 2 * _MAX_DEPTH or text.count("[") + text.count("{") < _MAX_DEPTH


def check_frame(request):
    """Refuse, before anything is sent, a frame the Broker would refuse as
    not strict JSON, with the Broker's own codes: the native transport
    embeds the frame in its envelope, so an invalid frame would otherwise be
    an invalid envelope and get another code than under wazero."""
    if not request:
        raise CapabilityError("frame_empty", "the call frame is empty")
    if _frame is None:
        _codecs()
    try:
        raw = bytes(request)
        text = raw.decode("utf-8")
        # Only a run of more than 308 digits can be an integer beyond a
        # double's range: frames without one (found in C, on the bytes)
        # skip the hook on every integer.
        long_run = len(raw) > 308 and _DIGIT_RUN in raw.translate(_digits)
        doc = _loads_strict(text, _frame_long if long_run else _frame)
    except (ValueError, RecursionError):
        doc = None
    if (
        not isinstance(doc, dict)
        or set(doc) != {"call_id", "capability", "arguments"}
        or not isinstance(doc["call_id"], str)
        or not isinstance(doc["capability"], str)
        or not (_surely_shallow(text) or _depth_ok(doc))
    ):
        raise CapabilityError(
            "frame_malformed",
            "the call frame is not strict JSON of the form {call_id, capability, arguments}",
        )
    if not doc["call_id"]:
        # The native transport keys its table of calls by the id, and
        # refuses a frame without one as a malformed envelope.
        raise CapabilityError(
            "invalid_call_id", "the call id is neither capability-<n> nor <parent>:program:<n>"
        )


def _malformed():
    return AmbiguousOutcome(
        "malformed_response", "the host's response could not be decoded"
    )


_REFUSALS = ("error", "denied", "refused")


def decode(response):
    """Return the canonical JSON bytes of the result of one call.

    Only a transport status "completed" whose broker response has status
    "ok" yields a result; a refusal raises CapabilityError, anything the
    host cannot vouch for raises AmbiguousOutcome."""
    if not isinstance(response, (bytes, bytearray, memoryview)):
        raise TypeError("response must be bytes")
    if _strict is None:  # _plain is read here, before _loads_strict
        _codecs()
    try:
        text = bytes(response).decode("utf-8")
        try:
            doc, plain = _loads_strict(text, _plain), True
        except _NotPlain:
            doc, plain = _loads_strict(text), False
    except (ValueError, RecursionError):
        raise _malformed() from None
    if not isinstance(doc, dict):
        raise _malformed()
    status = doc.get("status")
    if status == "completed":
        # Without floats, large integers and characters beyond the BMP,
        # the C encoder's sorted compact JSON is RFC 8785 to the byte.
        plain = plain and _no_astral(text)
        return _decode_broker(doc.get("broker_response"), plain)
    code, message = _code(doc)
    if status == "rejected":
        raise CapabilityError(code, message)
    if status == "ambiguous":
        raise AmbiguousOutcome(code, message)
    raise _malformed()


def _no_astral(text):
    """True when text has no character beyond the BMP (one UTF-16 unit pair,
    which sorts before U+E000-U+FFFF in UTF-16 order, after them by code
    point) and no \\u escape (which may make one, or a lone surrogate).
    text is decoded UTF-8: it has no surrogate of its own."""
    if "\\u" in text:
        return False
    return text.isascii() or len(text.encode("utf-16-le")) == 2 * len(text)


def _code(doc):
    code = doc.get("error_code")
    message = doc.get("message", "")
    if not isinstance(code, str) or not code:
        code = "unspecified"
    if not isinstance(message, str):
        message = ""
    return code, message


def _decode_broker(broker, plain):
    if not isinstance(broker, dict):
        raise _malformed()
    status = broker.get("status")
    if status == "ok":
        if "result" not in broker:
            raise _malformed()
        try:
            if plain:
                return "".join(_encode_plain(broker["result"], 0)).encode("utf-8")
            return canonical(broker["result"])
        except (ValueError, TypeError, UnicodeEncodeError, RecursionError):
            raise _malformed() from None
    code, message = _code(broker)
    if status in _REFUSALS:
        raise CapabilityError(code, message)
    if status == "ambiguous":
        raise AmbiguousOutcome(code, message)
    raise _malformed()


def canonical(value):
    """Encode a JSON value per RFC 8785 (JCS): keys sorted by UTF-16 code
    units, no whitespace, ECMAScript number formatting, UTF-8."""
    _codecs()
    out = []
    _encode(value, out, _encode_string)
    return "".join(out).encode("utf-8")


def _utf16_key(item):
    return item[0].encode("utf-16-be", "surrogatepass")


def _encode(value, out, dumps):
    if value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif isinstance(value, str):
        out.append(dumps(value))
    elif isinstance(value, int):
        # JSON numbers are IEEE-754 doubles to RFC 8785: an integer beyond
        # 2**53 is written as the double it becomes, as the host does.
        if -(1 << 53) <= value <= (1 << 53):
            out.append(str(int(value)))
        else:
            try:
                out.append(_es_number(float(value)))
            except OverflowError:
                raise ValueError("number out of range") from None
    elif isinstance(value, float):
        out.append(_es_number(value))
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out, dumps)
        out.append("]")
    elif isinstance(value, dict):
        for key in value:
            if not isinstance(key, str):
                raise TypeError("object keys must be strings")
        out.append("{")
        for i, (key, item) in enumerate(sorted(value.items(), key=_utf16_key)):
            if i:
                out.append(",")
            out.append(dumps(key))
            out.append(":")
            _encode(item, out, dumps)
        out.append("}")
    else:
        raise TypeError("not a JSON value: %s" % type(value).__name__)


def _es_number(x):
    """Number::toString from ECMAScript, as RFC 8785 requires."""
    if x != x or x in (float("inf"), float("-inf")):
        raise ValueError("non-finite number")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    text = repr(abs(x))  # the shortest round-tripping digits
    mantissa, _, exp = text.partition("e")
    whole, _, frac = mantissa.partition(".")
    digits = whole + frac
    n = len(whole) + (int(exp) if exp else 0)
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0") or "0"
    k = len(digits)
    if k <= n <= 21:
        body = digits + "0" * (n - k)
    elif 0 < n <= 21:
        body = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        body = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        tail = "e%s%d" % ("+" if e >= 0 else "-", abs(e))
        body = (digits[0] + "." + digits[1:] if k > 1 else digits) + tail
    return sign + body
