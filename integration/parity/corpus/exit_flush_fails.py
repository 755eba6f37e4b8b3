# A script whose standard output fails to flush when it ends: `python
# script.py` reports it as an unraisable exception ("Exception ignored
# in: ...") and exits 120, which the runner does on both backends.
import sys


class Unflushable:
    def __init__(self, real):
        self.real = real

    def write(self, text):
        return self.real.write(text)

    def flush(self):
        raise ValueError("stdout cannot flush")

    def __repr__(self):
        return "<Unflushable>"


print("before", flush=True)
sys.stdout = Unflushable(sys.stdout)
print("written, never flushed by the exit")
