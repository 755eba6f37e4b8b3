"""The guest's public runtime module.

Scripts use set_result() and catch the exception types. The generated
prelude binds the parent call id with _bind() and turns every capability
function into _capability_call(); neither is for scripts. Nothing here
grants anything: the host admits or refuses every call.
"""

# Imports are kept to what a run without capability calls needs (the
# runner imports this module in every run): the host bridge is imported on
# first use, and JSON is _agent_runtime_wire's (from the json package's C
# accelerator, without the package, which imports re: 20 ms under wazero).
try:
    from _thread import RLock as _RLock
    from _thread import allocate_lock as _Lock
except ImportError:  # a CPython built without threads (WASI): nothing to guard

    class _Lock:
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    _RLock = _Lock


import _agent_runtime_wire as _wire
from _agent_runtime_wire import AgentRuntimeError, AmbiguousOutcome, CapabilityError

__all__ = ["set_result", "AgentRuntimeError", "CapabilityError", "AmbiguousOutcome"]

MAX_RESULT_BYTES = 1 << 20
MAX_DEPTH = 64

_lock = _Lock()
# One capability call at a time: a call holds _calls from its numbering to
# its answer, so that its id reaches the host before the next one is
# numbered, from any number of threads (the host admits a programmatic id
# only as the parent's next: ids numbered by two threads could arrive in
# either order, and a refused id is never sent again). Under wazero there
# are no threads and the host serves one call at a time anyway. Reentrant:
# a signal handler's call, made while its thread's call waits, goes on.
_calls = _RLock()
_bound = False
_parent = None
_next = 1
_result = None  # the JSON text given to set_result, or None


def _bind(parent):
    """Fix the call id namespace once: None for direct ids capability-<n>,
    else programmatic ids <parent>:program:<n>; n counts from 1."""
    global _bound, _parent, _next
    if parent is not None and (not isinstance(parent, str) or not parent):
        raise TypeError("parent must be None or a non-empty string")
    with _lock:
        if _bound:
            raise AgentRuntimeError("already_bound", "the runtime is already bound")
        _bound, _parent, _next = True, parent, 1


_dumps = _wire.dumps  # compact JSON, no NaN or Infinity


def _capability_call(name, args):
    """Call one capability with keyword arguments; return its decoded result."""
    global _next
    if not isinstance(name, str) or not name:
        raise TypeError("capability name must be a non-empty string")
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise TypeError("capability arguments must be a dict")
    try:
        encoded = _dumps(args)
        encoded_name = _dumps(name)
    except (TypeError, ValueError, RecursionError):
        raise CapabilityError(
            "arguments_not_json", "the arguments are not JSON-serialisable"
        ) from None
    try:
        tail = (',"capability":%s,"arguments":%s}' % (encoded_name, encoded)).encode("utf-8")
    except UnicodeEncodeError:
        raise CapabilityError(
            "arguments_not_json", "the arguments are not valid UTF-8 text"
        ) from None
    import _agent_runtime_host

    # The id is allocated once the frame can be built, and given back when
    # the frame does not leave the guest: refused before it left (_UNSENT),
    # or an exception (a signal handler's) before the bridge was called.
    # The host expects the next number, and a number it never saw would
    # leave a gap it refuses, for every later call.
    with _calls:
        n = None
        bridged = False
        try:
            with _lock:
                n = _next
                _next += 1
                parent = _parent
            call_id = "capability-%d" % n if parent is None else "%s:program:%d" % (parent, n)
            frame = b'{"call_id":' + _dumps(call_id).encode("utf-8") + tail
            bridged = True
            answer = _agent_runtime_host.call(frame)
        except BaseException as exc:
            unsent = isinstance(exc, CapabilityError) and exc.error_code in _UNSENT
            if n is not None and (unsent or not bridged):
                _give_back(n)
            raise
    return _wire.loads(answer)


# The codes of a call refused before any host admitted it: by the bridge
# before the frame left the guest (too large, malformed, no channel), or by
# the Broker's admission, which spends no id (its frame check, and a run
# out of calls: every later call is then refused with the same code).
_UNSENT = frozenset(
    ("frame_too_large", "frame_empty", "frame_malformed", "channel_unavailable", "max_calls_exhausted")
)


def _give_back(n):
    """Make n the next id again, unless another call has taken one since
    (a signal handler's, made while n's call waited): then the gap stays,
    and the next call's answer says so."""
    global _next
    with _lock:
        if _next == n + 1:
            _next = n


def _check(value, depth):
    if depth > MAX_DEPTH:
        raise AgentRuntimeError("result_not_json", "the result nests too deeply")
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise AgentRuntimeError("result_not_json", "object keys must be strings")
            _check(item, depth + 1)
    elif isinstance(value, (list, tuple)):
        for item in value:
            _check(item, depth + 1)
    elif isinstance(value, int) and value.bit_length() > 1000:
        # The host reads every number as a double and refuses one beyond
        # its range (json_number_out_of_range), as check_frame does a
        # call's: refused here, the script can handle it and end ok.
        try:
            float(value)
        except OverflowError:
            raise AgentRuntimeError("result_not_json", "an integer is beyond a JSON number's range") from None


def set_result(value):
    """Record the run's result: a JSON-serialisable value of at most 1 MiB.
    The value is copied now; later changes to it are not seen."""
    global _result
    _check(value, 1)
    try:
        text = _dumps(value)
        size = len(text.encode("utf-8"))
    except (TypeError, ValueError, UnicodeEncodeError, RecursionError):
        raise AgentRuntimeError(
            "result_not_json", "the result is not JSON-serialisable"
        ) from None
    if size > MAX_RESULT_BYTES:
        raise AgentRuntimeError("result_too_large", "the result exceeds 1 MiB")
    with _lock:
        _result = text


def _take_result():
    """(result_set, JSON text or None), for the runner."""
    with _lock:
        return _result is not None, _result
