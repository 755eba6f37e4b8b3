# Plan "grants": echo.say may say only "Paris" or "Oslo", three times a
# run; notes.put (approval) may store notes of at most 16 characters, once.
# A grant refusal is grant_denied, before approval and dispatch, and names
# the argument, never the grant; refused calls spend none of the budget.
import agent_runtime
import echo
import notes


def attempt(label, f, **kw):
    try:
        print(label, "ok", f(**kw))
    except agent_runtime.CapabilityError as e:
        print(label, "refused", e.error_code, "|", e.message)


attempt("granted", echo.say, text="Paris")
attempt("not granted", echo.say, text="Berlin")
attempt("schema first", echo.say, text=5)
attempt("granted again", echo.say, text="Oslo")
attempt("third", echo.say, text="Paris")
attempt("budget spent", echo.say, text="Oslo")
attempt("long note, no approval asked", notes.put, text="a note far too long to store")
attempt("note", notes.put, text="buy milk")
attempt("second note", notes.put, text="buy eggs")
