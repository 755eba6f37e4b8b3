# select.poll and selectors over the descriptors a script has: a file and a
# directory are ready both ways, stdin (/dev/null) too, stdout and stderr
# (pipes) for writing only; a closed descriptor is POLLNVAL, one asked
# nothing answers nothing; a timeout is waited only when nothing is ready;
# more entries than the descriptor limit is EINVAL.
# The constants are Linux's. Under wazero every write poll was POLLERR,
# the constants were wasi-libc's, a descriptor asked nothing failed the
# whole poll with ENOSYS, and a ready descriptor still waited out the
# timeout (third_party/wazero item 20, python/wasi/include/poll.h).
import os
import resource
import select
import selectors
import time

names = sorted(n for n in dir(select) if n.startswith("POLL"))
print("constants:", [(n, getattr(select, n)) for n in names])


def bits(mask):
    return [n for n in names if mask & getattr(select, n)] or ["-"]


with open("poll_data.txt", "w") as f:
    f.write("data\n")
reader = open("poll_data.txt")
writer = open("poll_data.txt", "a")
directory = os.open(".", os.O_RDONLY)
closed = os.open("poll_data.txt", os.O_RDONLY)
os.close(closed)

both = select.POLLIN | select.POLLOUT
cases = [
    ("stdin", 0, both),
    ("stdout", 1, both),
    ("stderr", 2, both),
    ("file opened for reading", reader.fileno(), both),
    ("file opened for appending", writer.fileno(), both),
    ("directory", directory, both),
    ("rdnorm and wrnorm", reader.fileno(), select.POLLRDNORM | select.POLLWRNORM),
    ("pri only", reader.fileno(), select.POLLPRI),
]
for label, fd, events in cases:
    p = select.poll()
    p.register(fd, events)
    began = time.monotonic()
    answer = p.poll(300)
    waited = time.monotonic() - began
    print(f"{label:28}", [bits(ev) for _, ev in answer], "waited:", waited > 0.25)

p = select.poll()
p.register(closed, select.POLLIN)
print("closed descriptor:", [bits(ev) for _, ev in p.poll(0)])
p = select.poll()
p.register(closed, 0)
print("closed descriptor, asked nothing:", [bits(ev) for _, ev in p.poll(0)])

# stdout is never readable: the poll waits out its timeout.
p = select.poll()
p.register(1, select.POLLIN)
began = time.monotonic()
print("stdout for reading:", p.poll(100), "waited:", time.monotonic() - began >= 0.09)

# A ready descriptor beside one that never is: no wait.
p = select.poll()
p.register(1, select.POLLIN)
p.register(reader.fileno(), select.POLLIN)
began = time.monotonic()
print("one ready of two:", len(p.poll(2000)), "waited:", time.monotonic() - began > 1)

# More entries than RLIMIT_NOFILE allows descriptors: EINVAL, as Linux
# answers.
limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
for n in (limit, limit + 1):
    p = select.poll()
    for fd in range(n):
        p.register(100000 + fd, select.POLLIN)
    try:
        print(n - limit, "past the limit:", len(p.poll(0)), "entries answered")
    except OSError as e:
        print(n - limit, "past the limit: errno", e.errno)

with selectors.PollSelector() as sel:
    sel.register(writer, selectors.EVENT_WRITE, "writer")
    sel.register(reader, selectors.EVENT_READ | selectors.EVENT_WRITE, "reader")
    for key, mask in sorted(sel.select(timeout=1), key=lambda km: km[0].data):
        print("selector:", key.data, mask)

r, w, x = select.select([reader, 0], [writer, 1, 2], [], 1)
print("select:", len(r), len(w), len(x))

reader.close()
writer.close()
os.close(directory)
os.remove("poll_data.txt")
