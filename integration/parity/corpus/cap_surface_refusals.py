# Programmatic surface: direct ids and out-of-sequence program ids are refused
# before any capability is resolved (no receipt), the next in-order call works.
import json

import _agent_runtime_host
import agent_runtime
import echo


def raw(call_id, capability="echo.say", arguments=None):
    if arguments is None:
        arguments = {"text": "x"}
    frame = {"call_id": call_id, "capability": capability, "arguments": arguments}
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
print(raw("main:program:9", arguments=[]))
print(echo.say(text="second"))
print(raw("main:program:3", capability="no.such"))
agent_runtime._next = 4  # the denied call above spent id 3
print(echo.say(text="fourth"))
