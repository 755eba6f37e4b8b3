# The 1 MiB bound on a call frame, at the bound and just past it.
import _agent_runtime_host
import agent_runtime
import json

import echo

head = b'{"call_id":"main:program:1","capability":"echo.say","arguments":{"text":"at the bound"}}'
for label, frame in [
    ("exactly 1 MiB", head + b" " * ((1 << 20) - len(head))),
    ("1 MiB + 1", head + b" " * ((1 << 20) + 1 - len(head))),
]:
    try:
        print(label, json.loads(_agent_runtime_host.call(frame)))
    except agent_runtime.AgentRuntimeError as e:
        print(label, type(e).__name__, e.error_code)
agent_runtime._next = 2
print(echo.say(text="after"))
