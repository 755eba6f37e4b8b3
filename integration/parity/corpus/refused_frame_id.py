# A frame the Broker refuses before admission (arguments not an object) does
# not spend its call id: the Broker admits the same id with a valid frame
# next. Natively the transport's idempotency table remembers the refused
# frame under that id and answers the valid call call_identity_mismatch.
import json

import _agent_runtime_host
import agent_runtime
import echo

print(echo.say(text="first"))
frame = {"call_id": "main:program:2", "capability": "echo.say", "arguments": []}
try:
    _agent_runtime_host.call(json.dumps(frame).encode())
except agent_runtime.CapabilityError as e:
    print("refused", e.error_code)
try:
    print(echo.say(text="second, same id, valid frame"))
except agent_runtime.CapabilityError as e:
    print("refused", e.error_code)
