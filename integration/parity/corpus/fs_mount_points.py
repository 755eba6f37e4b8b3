# Paths ending in "/" or "/." name directories only, on every mount (under
# wazero the in-memory and read-only mounts once ignored the ending:
# open("/etc/hosts/") opened the file, and "file/." was ENOENT, not
# ENOTDIR); and os.path.ismount says of each
# directory what the native sandbox's mounts make true (under wazero /etc
# once read as a mount). Left out: /run/apysup and its job directory,
# natively mounts of their own, under wazero on the read-only root's
# device, whose answers (EROFS) the WASI build reads from that device.
import errno, os

def attempt(label, f):
    try:
        r = f()
        r = "ok" if r is None or isinstance(r, (int, os.stat_result)) else r
    except OSError as e:
        r = errno.errorcode[e.errno]
    print(label, r)

files = ("/etc/hosts", "/usr/lib/python3.11/os.py", "/dev/null", "/opt/apysup/apysup_runner.py",
         "/run/apysup/job/.argv", "/proc/cpuinfo", "/usr/share/zoneinfo/UTC", "/etc/python3.11/sitecustomize.py")
dirs = ("/etc", "/usr/lib/python3.11", "/dev", "/opt/apysup", "/run/apysup/job", "/proc", "/usr/share/zoneinfo", "/etc/python3.11")
for p in files + dirs:
    for ending in ("/", "/."):
        q = p + ending
        attempt("open " + q, lambda: os.close(os.open(q, os.O_RDONLY)))
        attempt("open creat " + q, lambda: os.close(os.open(q, os.O_RDONLY | os.O_CREAT, 0o644)))
        attempt("open write " + q, lambda: os.close(os.open(q, os.O_WRONLY)))
        attempt("stat " + q, lambda: os.stat(q))
        attempt("lstat " + q, lambda: os.lstat(q))
        print("exists", q, os.path.exists(q), os.path.isdir(q), os.path.isfile(q))
for p in ("/etc/missing/", "/usr/lib/missing/", "/etc/missing/.", "/etc/hosts/x", "/usr/lib/python3.11/os.py/x/y"):
    attempt("stat " + p, lambda: os.stat(p))
    attempt("open creat " + p, lambda: os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)))

for p in dirs:
    attempt("open creat " + p, lambda: os.close(os.open(p, os.O_RDONLY | os.O_CREAT, 0o644)))
for p in ("/", "/etc", "/etc/python3.11", "/usr", "/usr/lib", "/usr/lib/python3.11", "/usr/share/zoneinfo",
          "/opt", "/opt/apysup", "/run", "/run/apysup/out", "/workspace",
          "/tmp", "/dev", "/proc"):
    print("ismount", p, os.path.ismount(p))
print("same file", os.path.samefile("/etc", "/etc/python3.11/.."), os.path.samefile("/", "/etc/.."),
      os.path.samefile("/etc", "/"), os.path.samefile("/run/apysup", "/run/apysup/job/.."),
      os.path.samefile("/opt/apysup", "/run/apysup/job"))
