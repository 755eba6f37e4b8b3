# Run on the both surface: the prelude's programmatic calls and direct frames
# written by hand are both admitted.
import json

import _agent_runtime_host
import agent_runtime
import echo

print(echo.say(text="programmatic"))
for n in (1, 7):
    frame = {"call_id": "capability-%d" % n, "capability": "echo.say", "arguments": {"text": "direct %d" % n}}
    print(json.loads(_agent_runtime_host.call(json.dumps(frame).encode())))
print(echo.say(text="programmatic again"))
