# What a script asks the OS about its process and its host, beyond
# gap_platform.py: natively the sandbox answers (its own pid namespace, the
# guest's user); WASI preview 1 has none of these calls.
# Then descriptor-level calls WASI lacks, and a read sized
# far beyond the file: natively its buffer is reserved lazily (pages never
# touched), in wasm32's linear memory it must fit under the run's memory
# limit (512 MiB by default).
import os


def probe(label, f):
    try:
        v = f()
    except Exception as e:
        v = "%s: %s" % (type(e).__name__, e)
    print(label, v)


probe("getppid", lambda: os.getppid())
probe("ids", lambda: (os.getuid(), os.geteuid(), os.getgid(), os.getegid()))
probe("umask", lambda: os.umask(0o022))
probe("kill 0", lambda: os.kill(os.getpid(), 0))
probe("nice", lambda: os.nice(0))
probe("getloadavg", lambda: len(os.getloadavg()))
probe("sched_getaffinity", lambda: len(os.sched_getaffinity(0)) >= 1)
probe("getlogin", lambda: os.getlogin())
probe("pwd", lambda: __import__("pwd").getpwuid(os.getuid()).pw_name)
with open("small.txt", "w") as f:
    f.write("hello\n")
probe("dup", lambda: os.close(os.dup(0)))
probe("pipe", lambda: [os.close(fd) for fd in os.pipe()])
probe("get_inheritable", lambda: os.get_inheritable(1))
probe("read(10**9)", lambda: len(open("small.txt", "rb").read(10**9)))
probe("read(10**6)", lambda: len(open("small.txt", "rb").read(10**6)))
os.remove("small.txt")
