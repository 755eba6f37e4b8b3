# chown on both backends. The guest is uid and gid 1000 without
# capabilities: it may give a file it owns its own ids (or -1), nothing
# else, and nothing on the read-only root. WASI preview 1 has no chown:
# the WASI build answers from stat's view of the file's owner and mount
# (python/wasi/_apysup_files.c); natively the kernel answers.
import errno
import os
import shutil

me, group = os.getuid(), os.getgid()
print("ids", me, group)
with open("own", "w") as f:
    f.write("x")
os.mkdir("own_dir")
paths = ("own", "own_dir", "/workspace", "/tmp", "/dev/null", "/usr/lib/python3.11/os.py",
         "/usr/lib/python3.11", "/", "/run/apysup", "/run/apysup/job", "missing", "own/x")
for path in paths:
    answers = []
    for ids in ((-1, -1), (me, -1), (-1, group), (me, group), (0, -1), (-1, 0), (me, 0), (65534, -1), (-1, 4242)):
        try:
            os.chown(path, *ids)
            answers.append("ok")
        except OSError as e:
            answers.append(errno.errorcode[e.errno])
    print(path, " ".join(answers))


def attempt(label, call):
    try:
        call()
        print(label, "ok")
    except OSError as e:
        print(label, type(e).__name__, errno.errorcode[e.errno], e.filename)


attempt("lchown", lambda: os.lchown("own", me, group))
attempt("lchown root", lambda: os.lchown("own", 0, -1))
attempt("nofollow", lambda: os.chown("own", me, -1, follow_symlinks=False))
fd = os.open("own", os.O_RDONLY)
attempt("fchown", lambda: os.fchown(fd, me, group))
attempt("fchown root", lambda: os.fchown(fd, -1, 0))
attempt("chown fd", lambda: os.chown(fd, -1, -1))
os.close(fd)
fd = os.open("/usr/lib/python3.11/os.py", os.O_RDONLY)
attempt("fchown read-only", lambda: os.fchown(fd, -1, -1))
os.close(fd)
attempt("fchown stdout", lambda: os.fchown(1, -1, -1))
attempt("fchown stdout uid", lambda: os.fchown(1, me, -1))
attempt("fchown closed", lambda: os.fchown(999, -1, -1))
d = os.open("/workspace", os.O_RDONLY)
attempt("dir_fd", lambda: os.chown("own", me, group, dir_fd=d))
attempt("dir_fd nofollow", lambda: os.chown("own", me, group, dir_fd=d, follow_symlinks=False))
attempt("dir_fd root", lambda: os.chown("own", 0, group, dir_fd=d))
attempt("dir_fd missing", lambda: os.chown("missing", -1, -1, dir_fd=d))
os.close(d)
# shutil.chown, and the ids and bits stat shows after.
shutil.chown("own", user=me, group=group)
attempt("shutil.chown root", lambda: shutil.chown("own", group=0))
st = os.stat("own")
print("after", st.st_uid, st.st_gid, oct(st.st_mode & 0o7777))
print("chown" in {f.__name__ for f in os.supports_fd}, "chown" in {f.__name__ for f in os.supports_dir_fd},
      "chown" in {f.__name__ for f in os.supports_follow_symlinks})
