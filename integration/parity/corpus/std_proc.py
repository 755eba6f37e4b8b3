# The machine through /proc, as both backends read it. Natively the
# sandbox mounts the kernel's proc file system, whose machine-wide files
# are the host's; under wazero there was no /proc at all. Now six of them
# are there, read from the host's at each open
# (internal/sandbox/wazero/procfs.go), with the native guest's modes and
# refusals. The values move between two runs (free memory, the load, the
# uptime), so this prints what a script takes from them that does not.
import os
import stat

with open("/proc/meminfo") as f:
    meminfo = dict(line.split(":", 1) for line in f)
total_kib = int(meminfo["MemTotal"].split()[0])
print("memory total matches sysconf", total_kib * 1024 // os.sysconf("SC_PAGE_SIZE") == os.sysconf("SC_PHYS_PAGES"))
print("meminfo keys", sorted(meminfo)[:8])
with open("/proc/cpuinfo") as f:
    cpuinfo = f.read()
print("processors", cpuinfo.count("processor\t:") == os.cpu_count())
with open("/proc/loadavg") as f:
    print("loadavg fields", len(f.read().split()))
with open("/proc/uptime") as f:
    print("uptime positive", float(f.read().split()[0]) > 0)
with open("/proc/version") as f:
    print("version", f.read().split()[:2])
with open("/proc/stat") as f:
    print("stat first", f.readline().split()[0])

for path in ("/proc", "/proc/meminfo"):
    st = os.stat(path)
    print(path, stat.filemode(st.st_mode), st.st_uid, st.st_gid, st.st_size, os.access(path, os.W_OK))
print("statvfs", tuple(os.statvfs("/proc"))[:8], os.statvfs("/proc").f_namemax)


def attempt(what, f):
    try:
        f()
        print(what, "ok")
    except OSError as e:
        print(what, e.errno)


attempt("write", lambda: open("/proc/meminfo", "w"))
attempt("create", lambda: open("/proc/new", "x"))
attempt("mkdir", lambda: os.mkdir("/proc/new"))
attempt("unlink", lambda: os.unlink("/proc/meminfo"))
attempt("chmod", lambda: os.chmod("/proc/meminfo", 0o644))
attempt("rename", lambda: os.rename("/proc/meminfo", "/proc/other"))
attempt("rmdir", lambda: os.rmdir("/proc"))
attempt("touch", lambda: os.utime("/proc/meminfo"))
attempt("missing", lambda: open("/proc/no-such-file"))
