# Descriptor-level calls and stat fields WASI preview 1 lacks, and a read
# sized far beyond the file: natively its buffer is reserved lazily (pages
# never touched), in wasm32's linear memory it must fit under the run's
# memory limit (512 MiB by default).
import os


def probe(label, f):
    try:
        v = f()
    except Exception as e:
        v = "%s: %s" % (type(e).__name__, e)
    print(label, v)


with open("small.txt", "w") as f:
    f.write("hello\n")
st = os.stat("small.txt")
probe("st_blocks st_blksize", lambda: (st.st_blocks, st.st_blksize))
probe("dup", lambda: os.close(os.dup(0)))
probe("pipe", lambda: [os.close(fd) for fd in os.pipe()])
probe("get_inheritable", lambda: os.get_inheritable(1))
probe("read(10**9)", lambda: len(open("small.txt", "rb").read(10**9)))
probe("read(10**6)", lambda: len(open("small.txt", "rb").read(10**6)))
os.remove("small.txt")
