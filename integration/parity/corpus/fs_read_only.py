# The read-only mounts refuse a write at open(2) with the same errno on both
# backends (wazero opened them and failed the first write with EBADF).
import errno, os, sys
for p in (sys.executable, "/opt/apysup/apysup_runner.py", "/usr/lib/python3.11/missing.py", "/usr/lib/python3.11"):
    line = []
    for mode in ("w", "a", "r+"):
        try:
            open(p, mode).close()
            line.append("opened")
        except OSError as e:
            line.append(errno.errorcode[e.errno])
    print(p, *line)
for f in (lambda: os.mkdir("/opt/apysup/d"), lambda: os.unlink("/opt/apysup/apysup_runner.py")):
    try:
        f()
    except OSError as e:
        print(errno.errorcode[e.errno])
for p in (sys.executable + "/x", "/usr/lib/nodir/x"):  # under a file, in a missing directory
    try:
        open(p, "w")
    except OSError as e:
        print(errno.errorcode[e.errno])
