# chmod on both backends: under wazero WASI preview 1 has no call for it,
# and the host's apysup_fs.chmod changes the bits on the run's writable
# mounts (internal/sandbox/wazero/chmod.go); stat shows them
# (fs_stat_modes.py). Elsewhere chmod fails as natively.
import errno
import os
import shutil
import stat

st = os.stat("input.txt")
print("file", stat.S_ISREG(st.st_mode), oct(st.st_mode & 0o777))
print("dir", stat.S_ISDIR(os.stat("sub").st_mode), oct(os.stat("sub").st_mode & 0o777))
os.chmod("input.txt", 0o600)
print("chmod", oct(os.stat("input.txt").st_mode & 0o777), stat.filemode(os.stat("input.txt").st_mode))
os.chmod("input.txt", 0o644)
print("uid", st.st_uid, "nlink", st.st_nlink, "size", st.st_size)
with open("run.sh", "w") as f:
    f.write("#!/bin/sh\necho hi\n")
os.chmod("run.sh", os.stat("run.sh").st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
print("+x", stat.filemode(os.stat("run.sh").st_mode), os.access("run.sh", os.R_OK))
os.mkdir("private")
os.chmod("private", 0o700)
shutil.copy("run.sh", "private/copy.sh")
shutil.copymode("input.txt", "private/copy.sh")
print("copies", stat.filemode(os.stat("private").st_mode), stat.filemode(os.stat("private/copy.sh").st_mode))
os.makedirs("/tmp/t")
os.chmod("/tmp/t", 0o750)
print("tmp", stat.filemode(os.stat("/tmp/t").st_mode))
os.chmod("/workspace", 0o700)
print("workspace", stat.filemode(os.stat("/workspace").st_mode))
os.chmod("/workspace", 0o755)
for p in ("missing", "sub/missing/x", "/tmp", "/dev", "/dev/null", "/", "/usr/lib", "/usr/lib/python3.11/os.py",
          "/run/apysup", "/run/apysup/job"):
    try:
        os.chmod(p, 0o600)
        print(p, "changed")
    except OSError as e:
        print(p, type(e).__name__, errno.errorcode[e.errno])

# The umask: 022 at the start, and what os.umask sets applies to every
# creation after it (open, os.open, os.mkdir, os.makedirs, tempfile), as
# natively.
made = []


def create(tag):
    with open(tag + ".txt", "w") as f:
        f.write(tag)
    os.close(os.open(tag + ".bin", os.O_CREAT | os.O_WRONLY, 0o666))
    os.mkdir(tag + ".dir")
    os.makedirs(tag + ".tree/a/b")
    made.extend([tag + ".txt", tag + ".bin", tag + ".dir", tag + ".tree/a/b", tag + ".tree/a", tag + ".tree"])
    return " ".join(stat.filemode(os.stat(p).st_mode) for p in made[-6:-2] + [tag + ".tree"])


start = os.umask(0o077)
print("umask at start", oct(start))
print("umask 077", create("u077"))
print("umask returns", oct(os.umask(0)))
print("umask 0", create("u000"))
os.umask(0o7777)
print("umask 7777 keeps", oct(os.umask(0o027)))
print("umask 027", create("u027"))
print("umask back", oct(os.umask(start)), oct(os.umask(start)))
for p in made:
    (os.rmdir if os.path.isdir(p) else os.remove)(p)
