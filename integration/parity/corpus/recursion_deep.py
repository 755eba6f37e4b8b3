# A script that recursed a million frames deep and failed there: the run
# ends with the interpreter's last 1000 entries, within the default 30 s
# timeout on both backends (the runner's traceback.format_exception read
# all million entries first: 15 s natively, 55 s under wazero).
import sys

sys.setrecursionlimit(10**6)


def down(n):
    return down(n + 1) + 1


print("down", flush=True)
down(0)
