# A path whose last component is "." or "..", or the root itself, names
# no entry to make, remove or rename: Linux answers before it touches
# anything (rmdir EINVAL, ENOTEMPTY or EBUSY; unlink EISDIR; mkdir and a
# link's or symlink's new name EEXIST; rename EBUSY, EXDEV across
# mounts). Under wazero the path was cleaned first, so rmdir("d/.")
# removed d and os.rmdir(".") the working directory. A directory before
# the last component that does not resolve is still that error.
import os
import tempfile


def attempt(label, fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
        print(label, "ok")
    except OSError as e:
        print(label, e.errno, e.strerror)


base = tempfile.mkdtemp(dir="/tmp")
os.chdir(base)
for d in ("a", "b", "c/sub"):
    os.makedirs(d)
open("f", "w").close()
for path in ("a/.", "a/..", "a/./", ".", "..", "/", "missing/.", "f/.", "/tmp/.", "c/sub/.."):
    attempt("rmdir " + path, os.rmdir, path)
    attempt("unlink " + path, os.unlink, path)
    attempt("mkdir " + path, os.mkdir, path)
    attempt("symlink " + path, os.symlink, "f", path)
    attempt("link " + path, os.link, "f", path)
    attempt("link-missing " + path, os.link, "nothing", path)
    attempt("rename-from " + path, os.rename, path, "moved")
    attempt("rename-to " + path, os.rename, "b", path)
    attempt("rename-from-ws " + path, os.rename, path, "/workspace/moved")
print(sorted(os.listdir(".")), sorted(os.listdir("c")), os.path.isdir(base))
dfd = os.open(".", os.O_RDONLY)
for path in ("a/.", "..", "x/."):
    attempt("mkdir dir_fd " + path, os.mkdir, path, dir_fd=dfd)
    attempt("symlink dir_fd " + path, os.symlink, "f", path, dir_fd=dfd)
    attempt("link dir_fd " + path, os.link, "f", path, src_dir_fd=dfd, dst_dir_fd=dfd)
    attempt("rename dir_fd " + path, os.rename, path, "moved", src_dir_fd=dfd, dst_dir_fd=dfd)
    attempt("rename-to dir_fd " + path, os.rename, "b", path, src_dir_fd=dfd, dst_dir_fd=dfd)
os.close(dfd)
print(sorted(os.listdir(".")), os.path.isdir(base))
