# Programmatic surface: direct ids and out-of-sequence program ids are refused
# before any capability is resolved (no receipt), the next in-order call works.
import json

import _agent_runtime_host
import agent_runtime
import echo


def raw(call_id, capability="echo.say", arguments=None):
    frame = {"call_id": call_id, "capability": capability, "arguments": arguments or {"text": "x"}}
    try:
        return json.loads(_agent_runtime_host.call(json.dumps(frame).encode()))
    except agent_runtime.AgentRuntimeError as e:
        return "%s %s" % (type(e).__name__, e.error_code)


print(echo.say(text="first"))
print(raw("capability-1"))
print(raw("main:program:5"))
print(raw("other:program:2"))
print(raw("main:program:02"))
print(raw("bad id with spaces"))
print(raw("main:program:2", arguments=[]))
print(echo.say(text="second"))
for bad in (b"", b"{", b'{"call_id":"main:program:3","capability":"echo.say","arguments":{},"x":1}',
            b'{"call_id":"main:program:3","call_id":"main:program:3","capability":"echo.say","arguments":{}}'):
    try:
        _agent_runtime_host.call(bad)
    except agent_runtime.AgentRuntimeError as e:
        print(type(e).__name__, e.error_code)
print(echo.say(text="third"))
