# Every refusal reaches the script as a typed exception; the run goes on.
import agent_runtime
import echo
import fail
import shape


def attempt(label, f, **kw):
    try:
        print(label, "ok", f(**kw))
    except agent_runtime.AmbiguousOutcome as e:
        print(label, "ambiguous", e.error_code)
    except agent_runtime.CapabilityError as e:
        print(label, "refused", e.error_code, "|", e.message)


attempt("unknown capability", lambda: agent_runtime._capability_call("no.such", {}))
attempt("schema: wrong type", echo.say, text=5)
attempt("schema: missing", echo.say)
attempt("schema: extra field", echo.say, text="a", extra=1)
attempt("schema: too long", echo.say, text="x" * 201)
attempt("not json", echo.say, text={1, 2})
attempt("nan", echo.say, text="a", n=float("nan"))
attempt("handler error", fail.always)
attempt("output schema", shape.bad)
attempt("still fine", echo.say, text="fine")
