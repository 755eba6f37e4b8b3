# Frames that are not strict JSON of the form {call_id, capability, arguments}
# (admission step 1): refused before a capability is resolved, no receipt.
# Each uses a call id of its own, far from the sequence the runtime uses.
import _agent_runtime_host
import agent_runtime
import echo

for label, bad in [
    ("empty", b""),
    ("not json", b"{"),
    ("unknown field", b'{"call_id":"main:program:30","capability":"echo.say","arguments":{},"x":1}'),
    ("duplicate key", b'{"call_id":"main:program:31","call_id":"main:program:31","capability":"echo.say","arguments":{}}'),
    ("not utf-8", b'{"call_id":"main:program:32","capability":"echo.say","arguments":{"text":"\xff"}}'),
    ("no arguments", b'{"call_id":"main:program:33","capability":"echo.say"}'),
    ("array", b"[]"),
]:
    try:
        _agent_runtime_host.call(bad)
        print(label, "accepted")
    except agent_runtime.AgentRuntimeError as e:
        print(label, type(e).__name__, e.error_code)
print(echo.say(text="still in sequence"))
