# What a script sees of its own end, as `python script.py` ends: atexit
# callbacks, then its globals released in the order they were bound (a
# file left open is flushed and closed, __del__ runs, a suspended
# generator's finally clause runs), then the collector finalizes what was
# left in a cycle. Both backends' runner skips the rest of the interpreter's
# teardown (apysup_runner._exit_as_interpreter); the file's contents are in
# the workspace digest both sides compare.
import atexit
import weakref

left_open = open("left_open.txt", "w")
left_open.write("written, never closed\n")


class Noisy:
    def __init__(self, name):
        self.name = name

    def __del__(self):
        print("del", self.name)


def suspended():
    try:
        yield 1
    finally:
        print("generator finally")


gen = suspended()
next(gen)
first = Noisy("first")
weakref.finalize(Noisy("finalized"), print, "finalize callback")
kept = Noisy("kept")
weakref.finalize(kept, print, "finalize at exit")
cycle = Noisy("cycle")
cycle.me = cycle
atexit.register(print, "atexit")
print("main done")
