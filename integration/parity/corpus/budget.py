# Plan "budget": max_calls 3. The fourth call is refused before dispatch,
# and so is every call after it, with the same code: a refused call spends
# no id.
import agent_runtime
import echo

for i in range(6):
    try:
        print(i, echo.say(text="call %d" % i))
    except agent_runtime.CapabilityError as e:
        print(i, "refused", e.error_code)
