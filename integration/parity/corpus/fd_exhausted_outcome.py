# The script holds every descriptor it may have when it ends, where
# nothing releases them at its end (an attribute of sys: the runner
# releases the script's globals, as `python script.py` ends, before it
# writes the outcome; fd_held_by_globals.py): the runner, which writes the
# outcome in the script's own process natively and in the same interpreter
# under wazero, cannot open its file and fails by itself on both backends
# (status error, exit 1, no outcome).
import errno
import sys

held = sys.held_by_the_script = []


def keep():
    return held


def hook(kind, exc, tb):
    print("after the script:", issubclass(kind, OSError), file=sys.stderr)


sys.excepthook = hook
try:
    while True:
        held.append(open("/usr/share/zoneinfo/UTC", "rb"))
except OSError as e:
    print("stopped:", type(e).__name__, errno.errorcode.get(e.errno, e.errno), len(held) > 200)
