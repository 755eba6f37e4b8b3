# Fill /tmp (a size-capped tmpfs) by bytes and by inodes, and a workspace
# file past RLIMIT_FSIZE. argv: none.
def capacity(path):
    st = os.statvfs(path)
    return {"bytes": st.f_blocks * st.f_frsize, "inodes": st.f_files}


def write_mib(path, mib):
    """Write mib MiB to path, flushing each one, until done or refused."""
    chunk = b"x" * (1 << 20)
    with open(path, "wb") as f:
        for _ in range(mib):
            f.write(chunk)
            f.flush()
    return "wrote %d MiB" % mib


def fill_bytes(key, path):
    attempt(key + ":bytes", write_mib, path, 4096)  # 4 GiB, far beyond any cap
    info(key + "_filled", os.stat(path).st_size)
    os.unlink(path)


info("tmp_statvfs", capacity("/tmp"))
fill_bytes("tmp", "/tmp/fill")

made = []


def fill_inodes():
    for i in range(1_000_000):
        open("/tmp/f%d" % i, "w").close()
        made.append(i)
    return "made a million files"


attempt("tmp:inodes", fill_inodes)
info("tmp_files", len(made))
for i in made:
    os.unlink("/tmp/f%d" % i)

# /dev/shm (POSIX shared memory, multiprocessing's semaphores) is a tmpfs
# of its own with /tmp's caps.
info("shm_statvfs", capacity("/dev/shm"))
fill_bytes("shm", "/dev/shm/fill")

attempt("workspace:fsize", write_mib, "/workspace/big", 64)
info("workspace_big", os.stat("/workspace/big").st_size)
os.unlink("/workspace/big")
# The limits themselves: the hard limits cannot be raised (CPython turns
# setrlimit's EPERM into ValueError).
import resource

for name in ("RLIMIT_FSIZE", "RLIMIT_NOFILE", "RLIMIT_CORE"):  # the ones the sandbox sets
    which = getattr(resource, name)
    soft, hard = resource.getrlimit(which)
    attempt("rlimit:" + name, resource.setrlimit, which, (hard + 1, hard + 1))
control("tmp:usable-again", lambda: open("/tmp/after", "w").write("ok"))
