# The generated /etc (internal/sandbox/etc.go), the same bytes on both
# backends, read-only like the rest of the root: writes outside /workspace
# fail with EROFS (WASI numbers it 69; the WASI build answers 30).
import os, platform, pwd, grp, socket, stat

NAMES = ("group", "hostname", "hosts", "nsswitch.conf", "passwd", "resolv.conf", "python3.11/sitecustomize.py")
for name in NAMES:
    path = "/etc/" + name
    st = os.stat(path)
    with open(path, "rb") as f:
        data = f.read()
    print(name, stat.filemode(st.st_mode), st.st_uid, st.st_gid, st.st_size, len(data), data[:40])
print("python3.11 dir", stat.filemode(os.stat("/etc/python3.11").st_mode), os.listdir("/etc/python3.11"))
print("/etc", stat.filemode(os.stat("/etc").st_mode), os.path.isdir("/etc"), os.path.exists("/etc/shadow"), os.path.exists("/etc/os-release"))

# The databases and the files agree, as glibc reads them natively.
with open("/etc/passwd") as f:
    users = [line.split(":") for line in f.read().splitlines()]
print("passwd", [u[0] for u in users] == [p.pw_name for p in pwd.getpwall()], pwd.getpwnam("sandbox").pw_dir)
with open("/etc/group") as f:
    groups = [line.split(":")[0] for line in f.read().splitlines()]
print("group", groups == [g.gr_name for g in grp.getgrall()])
print("hostname", open("/etc/hostname").read().strip() == socket.gethostname() == platform.node())

for path in ("/etc/parity-nope", "/etc/hosts", "/etc/python3.11/new.py", "/usr/lib/parity-nope",
             "/opt/apysup/parity-nope", "/run/apysup/job/parity-nope", "/parity-nope"):
    try:
        open(path, "w")
        print(path, "written")
    except OSError as e:
        print(path, type(e).__name__, e.errno)
for name, op in (("mkdir", lambda: os.mkdir("/etc/d")), ("unlink", lambda: os.unlink("/etc/hosts")),
                 ("rename", lambda: os.rename("/etc/hosts", "/etc/hosts2")), ("chmod", lambda: os.chmod("/etc/hosts", 0o600)),
                 ("utime", lambda: os.utime("/etc/hosts", (0, 0))), ("rmdir", lambda: os.rmdir("/etc/python3.11"))):
    try:
        op()
        print(name, "done")
    except OSError as e:
        print(name, type(e).__name__, e.errno)
