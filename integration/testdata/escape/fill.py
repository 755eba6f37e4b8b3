# Fill /tmp (a size-capped tmpfs) by bytes and by inodes, and a workspace
# file past RLIMIT_FSIZE. argv: none.
tmp = os.statvfs("/tmp")
info("tmp_statvfs", {"bytes": tmp.f_blocks * tmp.f_frsize, "inodes": tmp.f_files})


def fill_bytes():
    chunk = b"x" * (1 << 20)
    with open("/tmp/fill", "wb") as f:
        for _ in range(4096):  # 4 GiB, far beyond any cap
            f.write(chunk)
            f.flush()
    return "wrote 4 GiB"


attempt("tmp:bytes", fill_bytes)
info("tmp_filled", os.stat("/tmp/fill").st_size)
os.unlink("/tmp/fill")

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
shm = os.statvfs("/dev/shm")
info("shm_statvfs", {"bytes": shm.f_blocks * shm.f_frsize, "inodes": shm.f_files})


def fill_shm():
    chunk = b"x" * (1 << 20)
    with open("/dev/shm/fill", "wb") as f:
        for _ in range(4096):
            f.write(chunk)
            f.flush()
    return "wrote 4 GiB"


attempt("shm:bytes", fill_shm)
info("shm_filled", os.stat("/dev/shm/fill").st_size)
os.unlink("/dev/shm/fill")


def big_workspace_file():
    chunk = b"x" * (1 << 20)
    with open("/workspace/big", "wb") as f:
        for _ in range(64):
            f.write(chunk)
            f.flush()
    return "wrote 64 MiB"


attempt("workspace:fsize", big_workspace_file)
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
