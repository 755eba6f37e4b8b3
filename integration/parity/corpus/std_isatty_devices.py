# A file opened on a device is no terminal: the guest's devices are the
# kernel's memory devices. Under wazero wasi-libc's isatty() was true of
# every character device, so open(os.devnull, "w") was line-buffered and
# reported a terminal (the seventh differential hunt).
import io
import os
import sys

for name in ("null", "zero", "full", "random", "urandom"):
    with open("/dev/" + name, "rb") as f:
        print(name, f.isatty(), os.isatty(f.fileno()))
with open(os.devnull, "w") as f:
    print("devnull text", f.isatty(), f.line_buffering)
for label, stream in (("stdin", sys.stdin), ("stdout", sys.stdout), ("stderr", sys.stderr)):
    print(label, stream.isatty(), os.isatty(stream.fileno()))
with open("/tmp/f", "w") as f:
    print("file", f.isatty())
