# The Plan's Python globals: called without an import, the script's own
# globals (not builtins), rebindable like any other.
print(echo_say(text="no import"))
print(echo_say.__name__, echo_say.__module__, echo_say.__doc__)


def helper():
    return echo_say(text="from a function")


print(helper())
import builtins
import sys

print("echo_say" in globals(), hasattr(builtins, "echo_say"), sys.modules["__main__"].echo_say is echo_say)
echo_say = len
print(echo_say("rebound"))
