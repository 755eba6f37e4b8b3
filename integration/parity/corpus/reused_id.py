# Reuse call ids through agent_runtime's internals: the same request again,
# then the same id with other arguments.
import agent_runtime
import echo


def attempt(label, **kw):
    try:
        print(label, "ok", echo.say(**kw))
    except agent_runtime.AgentRuntimeError as e:
        print(label, type(e).__name__, e.error_code)


attempt("first", text="same")
agent_runtime._next = 1
attempt("same request again", text="same")
agent_runtime._next = 1
attempt("same id, other arguments", text="other")
attempt("next id", text="next")
