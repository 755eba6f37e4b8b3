# A script whose sys.excepthook fails while it reports the script's
# uncaught error: `python script.py` prints "Error in sys.excepthook:",
# the hook's error, then "Original exception was:" and the original, and
# exits 1; a hook that calls sys.exit() sets the exit status instead.
import sys


def hook(kind, value, tb):
    print("hook sees", kind.__name__, value)
    if value.args[0] == "exit":
        sys.exit(9)
    raise RuntimeError("the hook broke")


sys.excepthook = hook
raise ValueError(sys.argv[1])
