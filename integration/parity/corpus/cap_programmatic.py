import agent_runtime
import echo

a = echo.say(text="hello")
b = echo.shout(text="caf\u00e9 \U0001F600", n=3)
print(a)
print(b)
print(echo.say.__name__, echo.say.__doc__, echo.say.__module__)
agent_runtime.set_result({"a": a, "b": b})
