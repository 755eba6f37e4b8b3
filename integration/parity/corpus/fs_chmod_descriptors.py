# Modes through a descriptor: os.fchmod and os.chmod with a descriptor, a
# dir_fd or follow_symlinks=False; os.mkdir and os.open with a dir_fd
# create with their modes; os.link with follow_symlinks=False or a dir_fd.
# Under wazero os.fchmod did not exist, os.chmod took no descriptor and
# no dir_fd (NotImplementedError), mkdir and open with a dir_fd created
# 0755 and 0644 whatever they were asked, their descriptors' F_GETFL said
# O_RDWR, os.link(follow_symlinks=False) was ENOENT for every file and
# os.link with a dir_fd linked a link itself where Linux follows it:
# WASI preview 1 has no chmod, and wasi-libc's linkat and wazero's
# path_link mistook both (_apysup_paths.c, apysup_fs.fd_path).
import fcntl
import os
import shutil
import stat
import tempfile


def mode(p, follow=True):
    try:
        return oct(stat.S_IMODE(os.stat(p, follow_symlinks=follow).st_mode))
    except OSError as e:
        return "stat: %s" % e.strerror


def attempt(label, f):
    try:
        r = f()
        print(label, "ok" if r is None else r)
    except Exception as e:
        print(label, type(e).__name__, getattr(e, "errno", None), e)


os.mkdir("base")
os.chdir("base")
with open("f", "w") as fh:
    fh.write("x")
os.mkdir("d")
os.symlink("f", "lnk")
os.symlink("missing", "dangling")
print("supports", os.chmod in os.supports_fd, os.chmod in os.supports_dir_fd,
      os.chmod in os.supports_follow_symlinks, hasattr(os, "fchmod"))

fd = os.open("f", os.O_RDONLY)
attempt("fchmod, read-only descriptor", lambda: os.fchmod(fd, 0o600))
print(" f", mode("f"))
attempt("chmod of a descriptor", lambda: os.chmod(fd, 0o640))
print(" f", mode("f"))
os.close(fd)
attempt("fchmod, closed", lambda: os.fchmod(fd, 0o600))
with open("f", "a") as fh:
    attempt("fchmod, open for appending", lambda: os.fchmod(fh.fileno(), 0o751))
print(" f", mode("f"))
lfd = os.open("lnk", os.O_RDONLY)
attempt("fchmod, opened through a link", lambda: os.fchmod(lfd, 0o604))
os.close(lfd)
print(" f", mode("f"), "lnk", mode("lnk", follow=False))

dfd = os.open(".", os.O_RDONLY)
attempt("chmod dir_fd", lambda: os.chmod("f", 0o604, dir_fd=dfd))
print(" f", mode("f"))
attempt("chmod dir_fd, a directory", lambda: os.chmod("d", 0o711, dir_fd=dfd))
print(" d", mode("d"))
attempt("fchmod, a directory", lambda: os.fchmod(dfd, 0o750))
print(" .", mode("."))
os.chmod(".", 0o755)
attempt("chmod dir_fd, through a link", lambda: os.chmod("lnk", 0o606, dir_fd=dfd))
print(" f", mode("f"))
attempt("chmod dir_fd, missing", lambda: os.chmod("nope", 0o600, dir_fd=dfd))
attempt("chmod dir_fd, empty", lambda: os.chmod("", 0o600, dir_fd=dfd))
attempt("chmod dir_fd, absolute", lambda: os.chmod(os.path.abspath("f"), 0o644, dir_fd=dfd))
print(" f", mode("f"))
ffd = os.open("f", os.O_RDONLY)
attempt("chmod dir_fd, not a directory", lambda: os.chmod("x", 0o600, dir_fd=ffd))
os.close(ffd)
attempt("chmod dir_fd, closed", lambda: os.chmod("f", 0o600, dir_fd=ffd))

attempt("chmod nofollow, a file", lambda: os.chmod("f", 0o640, follow_symlinks=False))
print(" f", mode("f"))
attempt("chmod nofollow, a link", lambda: os.chmod("lnk", 0o600, follow_symlinks=False))
attempt("chmod nofollow, dangling", lambda: os.chmod("dangling", 0o600, follow_symlinks=False))
attempt("chmod nofollow, missing", lambda: os.chmod("nope", 0o600, follow_symlinks=False))
attempt("chmod dir_fd nofollow, a link", lambda: os.chmod("lnk", 0o600, dir_fd=dfd, follow_symlinks=False))
attempt("chmod dir_fd nofollow, a file", lambda: os.chmod("f", 0o644, dir_fd=dfd, follow_symlinks=False))
print(" f", mode("f"), "lnk", mode("lnk", follow=False))

attempt("mkdir dir_fd 0o700", lambda: os.mkdir("m1", 0o700, dir_fd=dfd))
attempt("mkdir dir_fd 0o555", lambda: os.mkdir("m2", 0o555, dir_fd=dfd))
attempt("open dir_fd O_CREAT 0o600", lambda: os.close(os.open("o1", os.O_CREAT | os.O_WRONLY, 0o600, dir_fd=dfd)))
attempt("open dir_fd O_CREAT, existing", lambda: os.close(os.open("o1", os.O_CREAT | os.O_WRONLY, 0o777, dir_fd=dfd)))
attempt("open dir_fd O_EXCL 0o400", lambda: os.close(os.open("o2", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o400, dir_fd=dfd)))
old = os.umask(0o077)
attempt("open dir_fd, umask 077", lambda: os.close(os.open("o3", os.O_CREAT | os.O_WRONLY, 0o666, dir_fd=dfd)))
attempt("mkdir dir_fd, umask 077", lambda: os.mkdir("m3", dir_fd=dfd))
os.umask(old)
sub = os.open("d", os.O_RDONLY)
attempt("mkdir dir_fd of a subdirectory", lambda: os.mkdir("inner", 0o750, dir_fd=sub))
for p in ("m1", "m2", "o1", "o2", "o3", "m3", "d/inner"):
    print(" ", p, mode(p))
for flags in (os.O_WRONLY | os.O_APPEND, os.O_RDONLY, os.O_RDWR):
    o = os.open("o4", os.O_CREAT | flags, 0o644, dir_fd=dfd)
    print("F_GETFL", oct(fcntl.fcntl(o, fcntl.F_GETFL) & (os.O_ACCMODE | os.O_APPEND)))
    os.close(o)

attempt("link nofollow, a link", lambda: os.link("lnk", "hard1", follow_symlinks=False))
attempt("link nofollow, a file", lambda: os.link("f", "hard2", follow_symlinks=False))
attempt("link nofollow, dangling", lambda: os.link("dangling", "hard3", follow_symlinks=False))
attempt("link dir_fd, a link (followed)", lambda: os.link("lnk", "hard4", src_dir_fd=dfd, dst_dir_fd=sub))
attempt("link dir_fd nofollow, a link", lambda: os.link("lnk", "hard5", src_dir_fd=dfd, dst_dir_fd=sub, follow_symlinks=False))
attempt("link dir_fd, dangling (followed)", lambda: os.link("dangling", "hard6", src_dir_fd=dfd))
attempt("link dir_fd, to an existing name", lambda: os.link("f", "o1", src_dir_fd=dfd, dst_dir_fd=dfd))
attempt("link dir_fd, across mounts", lambda: os.link("f", "/tmp/x", src_dir_fd=dfd))
for p in ("hard1", "hard2", "hard3", "d/hard4", "d/hard5"):
    print(" ", p, os.path.islink(p), os.path.lexists(p), os.lstat(p).st_nlink if os.path.lexists(p) else None)

for s in (0, 1, 2):
    attempt("fchmod of std%d" % s, lambda: os.fchmod(s, 0o600))
ro = os.open("/usr/lib/python3.11/os.py", os.O_RDONLY)
attempt("fchmod, read-only mount", lambda: os.fchmod(ro, 0o600))
os.close(ro)
tmp = os.open("/tmp", os.O_RDONLY)
attempt("fchmod, /tmp itself", lambda: os.fchmod(tmp, 0o700))
os.close(tmp)
with tempfile.NamedTemporaryFile(dir=".") as t:
    attempt("fchmod, a temporary file", lambda: os.fchmod(t.fileno(), 0o640))
    print(" ", oct(stat.S_IMODE(os.fstat(t.fileno()).st_mode)))
shutil.copymode("f", "o1")
print("copymode", mode("o1"))
os.close(dfd)
os.close(sub)
