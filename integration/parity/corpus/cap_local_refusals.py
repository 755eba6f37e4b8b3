# Calls the runtime refuses before they leave the guest (arguments that are
# no JSON text, a frame over 1 MiB, arguments nested too deeply) give their
# id back: the next call is admitted, on both backends, and only the calls
# that reached the host have receipts.
import agent_runtime
import echo


def nested(depth):
    v = "x"
    for _ in range(depth):
        v = [v]
    return v


def call(**arguments):
    try:
        return echo.say(**arguments)
    except agent_runtime.AgentRuntimeError as e:
        return "%s %s" % (type(e).__name__, e.error_code)


print(call(text="first"))
print(call(text="\ud800"))
print(call(text="x", n=object()))
print(call(text="x" * (1 << 20)))
print(call(text="x", n=nested(80)))
print(call(text="second"))
print(call(text="y" * 300))  # refused by the host's input schema: a receipt, its id spent
print(call(text="third"))
print("next id:", agent_runtime._next)
