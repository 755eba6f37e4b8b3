"""Native bridge: one capability call over the run's Unix socket.

call(request) sends the call frame to the host inside the RPC envelope
(SPEC section 6) and returns the canonical JSON bytes of the result, or
raises the typed exceptions of _agent_runtime_wire. The WASI build has a
built-in module of the same name and API.

The HTTP/1.1 client is written by hand: one request shape, Content-Length
bodies only, connections kept alive and reused. http.client costs more than
the rest of a round trip (header objects, email parsing, buffered readers).
"""

import binascii
import os
import select
import socket
import threading
from time import monotonic_ns as _clock
from _json import encode_basestring_ascii as _json_string  # json.dumps of a str

import _agent_runtime_wire as _wire
from _agent_runtime_wire import AmbiguousOutcome, CapabilityError

__all__ = ["call"]

CHANNEL_FILE = "/run/apysup/channel.json"
MAX_REQUEST_BYTES = _wire.MAX_FRAME_BYTES
# A broker response carries a result of at most 1 MiB, which the host may
# escape on re-encoding; bound what is read, never trust a length blindly.
MAX_RESPONSE_BYTES = 8 << 20
MAX_HEAD_BYTES = 16 << 10
MAX_IDLE_CONNECTIONS = 4
# How long a call polls for the host's answer before it blocks in recv(2)
# (RATIONALE.md, "The call channel polls before it sleeps"): where idle
# CPUs halt, as on the VMs this was measured on, a blocked recv returns
# 25-60 us after the answer was written; most answers come within this.
ANSWER_SPIN_NS = 200_000

_lock = threading.Lock()
_channel = None  # (socket path, HTTP head prefix, envelope prefix)
_idle = []  # kept-alive sockets, each used by one call at a time


class _Closed(Exception):
    """The connection ended; received says whether any response byte came."""

    def __init__(self, received):
        super().__init__("connection closed")
        self.received = received


class _BadResponse(Exception):
    """What came back is no HTTP response the bridge can read."""


def _from_transport(exc):
    """True for an exception the connection raised: _Closed, _BadResponse,
    or an OSError with an errno. A signal handler's exception (a
    TimeoutError from an alarm, say) is the script's own: it propagates as
    it was raised, as it would from any other blocking call."""
    return isinstance(exc, (_Closed, _BadResponse)) or (
        isinstance(exc, OSError) and exc.errno is not None
    )


# base64.urlsafe_b64decode is this and binascii.a2b_base64; base64
# imports re.
_URLSAFE = bytes.maketrans(b"-_", b"+/")


def _load_channel():
    path = os.environ.get("APYSUP_CHANNEL_FILE") or CHANNEL_FILE
    try:
        with open(path, "rb") as f:
            doc = _wire.loads(f.read(64 << 10))
        fields = [
            doc[k]
            for k in (
                "socket",
                "channel_id",
                "invocation_id",
                "execution_id",
                "plan_sha256",
                "credential",
            )
        ]
    except (OSError, ValueError, KeyError, TypeError):
        raise CapabilityError(
            "channel_unavailable", "the capability channel is not configured"
        ) from None
    if not all(isinstance(v, str) and v for v in fields):
        raise CapabilityError(
            "channel_unavailable", "the capability channel is not configured"
        )
    sock_path, channel_id, invocation_id, execution_id, plan, credential = fields
    try:
        cred = credential.encode("ascii")
        binascii.a2b_base64((cred + b"=" * (-len(cred) % 4)).translate(_URLSAFE))
    except (ValueError, UnicodeEncodeError):
        raise CapabilityError(
            "channel_unavailable", "the capability channel is not configured"
        ) from None
    head = (
        b"POST /v1/calls HTTP/1.1\r\nHost: apysup\r\n"
        b"Authorization: Apysup-Credential " + cred + b"\r\n"
        b"Content-Type: application/json\r\nContent-Length: "
    )
    envelope = (
        '{"schema_version":"apysup.rpc.v1","channel_id":%s,"invocation_id":%s,'
        '"execution_id":%s,"plan_sha256":%s,"call":'
        % tuple(_json_string(v) for v in (channel_id, invocation_id, execution_id, plan))
    ).encode("utf-8")
    return sock_path, head, envelope


def _config():
    global _channel
    with _lock:
        if _channel is None:
            _channel = _load_channel()
        return _channel


def _connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
    except BaseException as exc:
        s.close()
        if not _from_transport(exc):
            raise  # a signal handler's, as everywhere in a call
        raise CapabilityError(
            "channel_unavailable", "the capability channel cannot be reached"
        ) from None
    return s


def _take():
    with _lock:
        if _idle:
            return _idle.pop(), True
    return None, False


def _give(s):
    with _lock:
        if len(_idle) < MAX_IDLE_CONNECTIONS:
            _idle.append(s)
            return
    s.close()


def _read_response(s):
    try:
        return _parse_response(s)
    except ValueError as exc:  # int() of a bad status or length, too
        raise _BadResponse(str(exc)) from None


def _parse_response(s):
    buf = bytearray()
    while True:
        end = buf.find(b"\r\n\r\n")
        if end >= 0:
            break
        if len(buf) > MAX_HEAD_BYTES:
            raise ValueError("response head too large")
        chunk = s.recv(65536)
        if not chunk:
            raise _Closed(len(buf) > 0)
        buf += chunk
    lines = bytes(buf[:end]).split(b"\r\n")
    parts = lines[0].split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError("bad status line")
    status = int(parts[1])
    length = None
    keep = parts[0] == b"HTTP/1.1"
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep:
            raise ValueError("bad header")
        name = name.strip().lower()
        value = value.strip()
        if name == b"content-length":
            length = int(value)
        elif name == b"transfer-encoding":
            raise ValueError("unexpected transfer encoding")
        elif name == b"connection":
            keep = value.lower() != b"close"
    if length is None or length < 0 or length > MAX_RESPONSE_BYTES:
        raise ValueError("bad content length")
    body = buf[end + 4 :]
    while len(body) < length:
        chunk = s.recv(min(length - len(body), 1 << 20))
        if not chunk:
            raise _Closed(True)
        body += chunk
    if len(body) != length:
        raise ValueError("unexpected bytes after the response")
    return status, bytes(body), keep


def _await_answer(s):
    """Poll s until it is readable or ANSWER_SPIN_NS have passed; the
    recv that follows then finds the answer there, or blocks for it."""
    poll = select.poll()
    poll.register(s, select.POLLIN)
    deadline = _clock() + ANSWER_SPIN_NS
    while not poll.poll(0) and _clock() < deadline:
        pass


def _round_trip(s, message):
    s.sendall(message)
    _await_answer(s)
    return _read_response(s)


def _unknown():
    return AmbiguousOutcome(
        "dispatch_outcome_unknown",
        "the connection failed after the call was sent",
    )


def call(request):
    """Send one call frame and return the canonical JSON bytes of its result."""
    if not isinstance(request, (bytes, bytearray)):
        raise TypeError("request must be bytes")
    if len(request) > MAX_REQUEST_BYTES:
        raise CapabilityError("frame_too_large", "the call frame exceeds 1 MiB")
    _wire.check_frame(request)
    path, head, envelope = _config()
    body = envelope + request + b"}"
    message = head + str(len(body)).encode("ascii") + b"\r\n\r\n" + body
    s, reused = _take()
    if s is None:
        s = _connect(path)
    try:
        try:
            status, payload, keep = _round_trip(s, message)
        except (_Closed, OSError) as exc:
            # A kept-alive connection the server had already closed: nothing
            # of the request was answered. Sending the same envelope again is
            # safe, because the host answers a repeated call id with a
            # replay or "call_in_flight", never with a second dispatch.
            if not _from_transport(exc) or not reused or (isinstance(exc, _Closed) and exc.received):
                raise
            s.close()
            try:
                s = _connect(path)
            except CapabilityError:
                raise _unknown() from None
            status, payload, keep = _round_trip(s, message)
    except BaseException as exc:
        # The connection is not used again: an answer may still be on it.
        s.close()
        if _from_transport(exc):
            raise _unknown() from None
        raise
    if keep:
        _give(s)
    else:
        s.close()
    try:
        return _wire.decode(payload)
    except AmbiguousOutcome as exc:
        if exc.error_code == "malformed_response" and 400 <= status < 500:
            raise CapabilityError(
                "transport_rejected", "the host refused the request"
            ) from None
        raise
