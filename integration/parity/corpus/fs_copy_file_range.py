# os.copy_file_range on both backends, with Linux's answers: offsets given
# or the descriptors' own, the count cut at the input's end, EXDEV between
# two filesystems (the native guest's /workspace, /tmp and out directory
# are tmpfs mounts of their own, its root another filesystem), EISDIR,
# EINVAL and EBADF for what is no pair of regular files open for reading
# and writing, overlapping ranges of one file refused. WASI preview 1 has
# no such call; the WASI build copies through a buffer with the kernel's
# checks in its order (python/wasi/_apysup_files.c).
import errno
import os


def attempt(label, call):
    try:
        print(label, call())
    except OSError as e:
        print(label, type(e).__name__, errno.errorcode[e.errno])
    except (ValueError, OverflowError, TypeError) as e:
        print(label, type(e).__name__, e)


data = bytes((i * 7 + i // 256) % 256 for i in range(10240))
with open("src", "wb") as f:
    f.write(data)
os.makedirs("d")
s = os.open("src", os.O_RDONLY)
d = os.open("dst", os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
attempt("plain", lambda: os.copy_file_range(s, d, 100))
attempt("offsets now", lambda: (os.lseek(s, 0, os.SEEK_CUR), os.lseek(d, 0, os.SEEK_CUR)))
attempt("given offsets", lambda: os.copy_file_range(s, d, 50, 1000, 5000))
attempt("offsets kept", lambda: (os.lseek(s, 0, os.SEEK_CUR), os.lseek(d, 0, os.SEEK_CUR), os.path.getsize("dst")))
attempt("past the end", lambda: os.copy_file_range(s, d, 50, 20000))
attempt("to the end", lambda: os.copy_file_range(s, d, 100000, 10000))
attempt("whole", lambda: os.copy_file_range(s, d, 2**31 - 1, 0, 20000))
attempt("zero", lambda: os.copy_file_range(s, d, 0))
attempt("negative count", lambda: os.copy_file_range(s, d, -1))
attempt("negative offset", lambda: os.copy_file_range(s, d, 10, -1))
attempt("negative out offset", lambda: os.copy_file_range(s, d, 10, 0, -1))
attempt("negative offset, nothing", lambda: os.copy_file_range(s, d, 0, -1))
os.close(d)
with open("dst", "rb") as f:
    got = f.read()
print("dst", len(got), got[:100] == data[:100], got[5000:5050] == data[1000:1050],
      got[20000:] == data, got.count(b"\0"))

w = os.open("wo", os.O_WRONLY | os.O_CREAT)
os.write(w, b"abc")
r = os.open("src", os.O_RDONLY)
attempt("input not readable", lambda: os.copy_file_range(w, os.open("x1", os.O_WRONLY | os.O_CREAT), 3, 0))
attempt("output not writable", lambda: os.copy_file_range(r, r, 10, 0, 20000))
a = os.open("app", os.O_WRONLY | os.O_CREAT | os.O_APPEND)
attempt("output appends", lambda: os.copy_file_range(r, a, 10, 0))
attempt("directory in", lambda: os.copy_file_range(os.open("d", os.O_RDONLY), a, 10))
attempt("directory in, plain out", lambda: os.copy_file_range(os.open("d", os.O_RDONLY), os.open("x2", os.O_WRONLY | os.O_CREAT), 10))
attempt("device in", lambda: os.copy_file_range(os.open("/dev/zero", os.O_RDONLY), os.open("x3", os.O_WRONLY | os.O_CREAT), 10))
attempt("device out", lambda: os.copy_file_range(r, os.open("/dev/null", os.O_WRONLY), 10))
attempt("closed in", lambda: os.copy_file_range(4000, a, 10))
attempt("closed out", lambda: os.copy_file_range(r, 4000, 10))

rw = os.open("rw", os.O_RDWR | os.O_CREAT)
os.write(rw, bytes(range(100)))
attempt("overlap", lambda: os.copy_file_range(rw, rw, 20, 0, 10))
attempt("overlap behind", lambda: os.copy_file_range(rw, rw, 20, 10, 0))
attempt("apart", lambda: os.copy_file_range(rw, rw, 10, 0, 50))
attempt("touching", lambda: os.copy_file_range(rw, rw, 10, 0, 10))
attempt("beyond its end", lambda: os.copy_file_range(rw, rw, 10, 90, 200))
os.close(rw)
with open("rw", "rb") as f:
    print("rw", f.read().hex())

attempt("to /tmp", lambda: os.copy_file_range(r, os.open("/tmp/t", os.O_WRONLY | os.O_CREAT), 10, 0))
attempt("to the out directory", lambda: os.copy_file_range(r, os.open("/run/apysup/out/o", os.O_WRONLY | os.O_CREAT), 10, 0))
attempt("from /usr", lambda: os.copy_file_range(os.open("/usr/lib/python3.11/os.py", os.O_RDONLY), os.open("x4", os.O_WRONLY | os.O_CREAT), 10, 0))
attempt("within /tmp", lambda: os.copy_file_range(os.open("/tmp/t", os.O_RDONLY), os.open("/tmp/u", os.O_WRONLY | os.O_CREAT), 10, 0))
