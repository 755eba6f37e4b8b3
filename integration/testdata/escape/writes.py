# Writing outside /workspace and /tmp fails: the root and every bind are
# read-only, /proc/sys and /proc/sysrq-trigger too. Nothing here writes a
# byte into an existing file: writable files are only opened (and reported).
import shutil

NEW = "apysup-escape-probe"
for d in ["/", "/etc", "/usr", "/usr/bin", "/usr/lib", "/opt", "/opt/apysup", "/run", "/run/apysup",
          "/run/apysup/job", "/bin", "/lib", "/dev", "/proc", "/proc/sys", "/proc/sys/kernel"]:
    attempt("create:" + d, create_new, os.path.join(d, NEW))
    attempt("mkdir:" + d, os.mkdir, os.path.join(d, NEW + ".d"))
    attempt("symlink:" + d, os.symlink, "/tmp", os.path.join(d, NEW + ".l"))

for path in ["/etc/passwd", "/etc/hosts", "/usr/bin/python3.11", "/opt/apysup/apysup_runner.py",
             "/run/apysup/channel.json", "/run/apysup/job/prelude.py",
             "/proc/sysrq-trigger", "/proc/sys/kernel/hostname", "/proc/sys/kernel/core_pattern",
             "/proc/sys/vm/drop_caches", "/proc/sys/kernel/modprobe", "/proc/sys/fs/file-max",
             "/proc/sys/net/ipv4/ip_forward", "/proc/sys/user/max_user_namespaces"]:
    attempt("open-write:" + path, open_for_write, path, os.O_APPEND)
# The running interpreter through its magic link (CVE-2019-5736's road).
for path in ["/proc/self/exe", "/proc/1/exe"]:
    attempt("open-write:" + path, lambda p: os.close(os.open(p, os.O_WRONLY | os.O_APPEND)), path)

# The guest's own user namespace maps: written once by the host, for good.
def write_map(path, line):
    fd = os.open(path, os.O_WRONLY)
    try:
        return os.write(fd, line)
    finally:
        os.close(fd)


attempt("map:uid_map", write_map, "/proc/self/uid_map", b"0 0 4294967295\n")
attempt("map:gid_map", write_map, "/proc/self/gid_map", b"0 0 4294967295\n")
attempt("map:setgroups", write_map, "/proc/self/setgroups", b"allow\n")

attempt("chmod:/etc/passwd", os.chmod, "/etc/passwd", 0o666)
attempt("chmod:/usr/bin/python3.11", os.chmod, "/usr/bin/python3.11", 0o4755)
attempt("rename:/etc/hosts", os.rename, "/etc/hosts", "/etc/hosts.old")
attempt("unlink:/opt/apysup/apysup_runner.py", os.unlink, "/opt/apysup/apysup_runner.py")
attempt("utime:/usr/bin/python3.11", os.utime, "/usr/bin/python3.11", (0, 0))
attempt("rmtree:/run/apysup/job", shutil.rmtree, "/run/apysup/job")
attempt("link:/usr/bin/python3.11", os.link, "/usr/bin/python3.11", "/workspace/python-link")
attempt("chown:/workspace", os.chown, "/workspace", 0, 0)

# Controls: the two writable places (and the runner's own outcome dir).
control("write:/workspace", lambda: open("/workspace/" + NEW, "w").write("ok"))
control("write:/tmp", lambda: open("/tmp/" + NEW, "w").write("ok"))
control("mkdir:/tmp", os.mkdir, "/tmp/" + NEW + ".d")

# Everything the guest can write, found by walking (kernel views excepted).
writable = []
for root, dirs, names in os.walk("/", onerror=lambda e: None):
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in ("/proc", "/sys")]
    for n in dirs + names:
        p = os.path.join(root, n)
        if not os.path.islink(p) and os.access(p, os.W_OK):
            writable.append(p)
    if os.access(root, os.W_OK):
        writable.append(root)
info("writable", sorted(set(writable)))
