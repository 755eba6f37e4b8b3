# select.select with descriptors in its exceptional set, the form that
# watches a descriptor for errors too: under wazero the whole call was
# ENOSYS (wasi-libc's select refuses any exceptional set). Linux reports
# an exceptional condition only for a socket's out-of-band data or a
# pseudo-terminal's packet mode, which the guest has neither of.
import os
import select
import sys
import time

with open("f.txt", "w+") as f:
    d = os.open(".", os.O_RDONLY)
    for label, fds in [("file", f), ("stdin", sys.stdin), ("directory", d)]:
        r, w, x = select.select([fds], [f], [fds], 0)
        print(label, len(r), len(w), len(x))
    r, w, x = select.select([], [], [f, d], 0)
    print("exceptional only", r, w, x)
    start = time.monotonic()
    r, w, x = select.select([], [], [f], 0.2)
    print("waits its timeout", time.monotonic() - start >= 0.15, r, w, x)
    closed = os.open("f.txt", os.O_RDONLY)
    os.close(closed)
    for sets in (([], [], [closed]), ([closed], [], [f]), ([f], [], [closed])):
        try:
            select.select(*sets, 0)
            print("closed: no error")
        except OSError as e:
            print("closed:", e.errno == 9, type(e).__name__)
    os.close(d)
