# Orphans under a pids limit smaller than their number: N times, a child
# forks a grandchild and exits at once; the grandchild, reparented to pid 1
# (the runner, its namespace's init), reports its new parent and exits too.
# The runner must reap each one: a zombie would hold its pid for the rest of
# the run, and N of them would exhaust the limit. argv: N.
import time

N = int(sys.argv[1])
report_host_uid()


def orphan():
    """One double fork; returns None, or what went wrong."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try:
            grandchild = os.fork()
        except OSError as exc:
            os.write(w, b"E%s\n" % _reason(exc).encode())
            os._exit(1)
        if grandchild == 0:
            end = time.monotonic() + 10  # until the child's exit reparents it
            while os.getppid() != 1 and time.monotonic() < end:
                time.sleep(0.001)
            os.write(w, b"P%d\n" % os.getppid())
            os._exit(0)
        os.write(w, b"G%d\n" % grandchild)
        os._exit(0)
    os.close(w)
    data = b""
    while True:  # to EOF: both the child and the grandchild have exited
        chunk = os.read(r, 64)
        if not chunk:
            break
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    got = {line[:1]: line[1:] for line in data.decode().split()}
    if "E" in got:
        return "fork:" + got["E"]
    if "G" not in got or "P" not in got:
        return "lost:" + repr(data)
    if got["P"] != "1":
        return "parent:" + got["P"]
    end = time.monotonic() + 10  # a generous bound: pid 1 reaps at once
    while os.path.exists("/proc/" + got["G"]):
        if time.monotonic() > end:
            return "not-reaped:" + got["G"]
        time.sleep(0.001)
    return None


for i in range(N):
    problem = orphan()
    if problem is not None:
        emit("FAILED", "orphans", "%d:%s" % (i, problem))
        break
else:
    emit("ALLOWED", "orphans")


def zombies():
    found = []
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                with open("/proc/%s/stat" % p) as f:
                    state = f.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state == "Z":
                found.append(int(p))
    return found


info("zombies", zombies())
