import echo

print("before")
print(echo.say(text="a call before the error"))


def inner(d):
    return d["missing"]


def outer():
    try:
        inner({})
    except KeyError as e:
        raise ValueError("wrapped: %r" % (e,)) from e


outer()
print("never")
