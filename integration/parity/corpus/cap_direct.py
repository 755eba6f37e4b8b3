# Run on the direct surface: the prelude binds no parent, ids are capability-<n>.
import agent_runtime
import echo

print(echo.say(text="one"))
print(echo.say(text="two", n=2))
try:
    echo.say(text=7)
except agent_runtime.CapabilityError as e:
    print("refused", e.error_code)
print(echo.say(text="three"))
