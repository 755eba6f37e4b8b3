# fcntl: the module's names and values, fcntl's commands, flock and lockf
# between descriptors of one process, and ioctl on files and pipes.
import errno, fcntl, os, struct

def attempt(label, f, *args):
    try:
        r = f(*args)
    except OSError as e:
        r = "OSError %s" % errno.errorcode.get(e.errno, e.errno)
    except (ValueError, TypeError, OverflowError) as e:
        r = "%s %s" % (type(e).__name__, e)
    print(label, r)

print(sorted((k, getattr(fcntl, k)) for k in dir(fcntl) if k.isupper()))
print(sorted(k for k in dir(fcntl) if not k.isupper() and not k.startswith("__")))

path = "/tmp/std_fcntl"
with open(path, "wb") as f:
    f.write(b"0123456789")
rd = os.open(path, os.O_RDONLY)
rw = os.open(path, os.O_RDWR | os.O_APPEND)
wr = os.open(path, os.O_WRONLY | os.O_NONBLOCK)

# A file created by the open (the other path of the open wrapper).
made = os.open(path + ".new", os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
attempt("made GETFL", fcntl.fcntl, made, fcntl.F_GETFL)
attempt("made SETLK rd", fcntl.fcntl, made, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))
os.close(made)
os.unlink(path + ".new")

for name, fd in (("rd", rd), ("rw", rw), ("wr", wr)):
    attempt(name + " GETFL", fcntl.fcntl, fd, fcntl.F_GETFL)
    attempt(name + " GETFD", fcntl.fcntl, fd, fcntl.F_GETFD)
attempt("SETFL nonblock", fcntl.fcntl, rd, fcntl.F_SETFL, os.O_NONBLOCK)
attempt("GETFL after", fcntl.fcntl, rd, fcntl.F_GETFL)
attempt("SETFL 0", fcntl.fcntl, rd, fcntl.F_SETFL, 0)
attempt("GETFL after", fcntl.fcntl, rd, fcntl.F_GETFL)
attempt("SETFD 0", fcntl.fcntl, rd, fcntl.F_SETFD, 0)
attempt("GETFD after", fcntl.fcntl, rd, fcntl.F_GETFD)
attempt("inheritable", os.get_inheritable, rd)
attempt("SETFD 1", fcntl.fcntl, rd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
attempt("GETFD after", fcntl.fcntl, rd, fcntl.F_GETFD)
attempt("inheritable", os.get_inheritable, rd)
for cmd in ("F_GETOWN", "F_GETSIG", "F_GETLEASE", "F_GETPIPE_SZ", "F_NOTIFY"):
    attempt(cmd, fcntl.fcntl, rw, getattr(fcntl, cmd))
attempt("SETSIG", fcntl.fcntl, rw, fcntl.F_SETSIG, 10)
attempt("GETSIG", fcntl.fcntl, rw, fcntl.F_GETSIG)
attempt("SETSIG bad", fcntl.fcntl, rw, fcntl.F_SETSIG, 99)
attempt("NOTIFY file", fcntl.fcntl, rw, fcntl.F_NOTIFY, fcntl.DN_MODIFY)
attempt("SETOWN 0", fcntl.fcntl, rw, fcntl.F_SETOWN, 0)
attempt("SETOWN self", fcntl.fcntl, rw, fcntl.F_SETOWN, os.getpid())
attempt("SETOWN other", fcntl.fcntl, rw, fcntl.F_SETOWN, 4242)
attempt("bad command", fcntl.fcntl, rw, 12345)
attempt("bad fd", fcntl.fcntl, 99, fcntl.F_GETFL)
attempt("closed", fcntl.flock, 99, fcntl.LOCK_SH)

# POSIX record locks: one process never conflicts with itself.
lk = struct.pack("hhqqi", fcntl.F_WRLCK, 0, 0, 0, 0)
attempt("SETLK wr on rw", lambda: fcntl.fcntl(rw, fcntl.F_SETLK, lk) == lk)
attempt("SETLK wr on rd", fcntl.fcntl, rd, fcntl.F_SETLK, lk)
attempt("SETLK rd on wr", fcntl.fcntl, wr, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 0, 0, 0))
attempt("SETLK bad type", fcntl.fcntl, rw, fcntl.F_SETLK, struct.pack("hhqqi", 7, 0, 0, 0, 0))
attempt("SETLK bad whence", fcntl.fcntl, rw, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 5, 0, 0, 0))
attempt("SETLK negative", fcntl.fcntl, rw, fcntl.F_SETLK, struct.pack("hhqqi", fcntl.F_WRLCK, 0, -5, 0, 0))
attempt("GETLK", lambda: struct.unpack("hhqqi", fcntl.fcntl(rd, fcntl.F_GETLK, struct.pack("hhqqi", fcntl.F_RDLCK, 0, 2, 3, 0))))
attempt("lockf ex on rw", fcntl.lockf, rw, fcntl.LOCK_EX | fcntl.LOCK_NB)
attempt("lockf ex on wr", fcntl.lockf, wr, fcntl.LOCK_EX | fcntl.LOCK_NB, 4, 2)
attempt("lockf ex on rd", fcntl.lockf, rd, fcntl.LOCK_EX | fcntl.LOCK_NB)
attempt("lockf sh on rd", fcntl.lockf, rd, fcntl.LOCK_SH)
attempt("lockf un", fcntl.lockf, rd, fcntl.LOCK_UN)
attempt("lockf bad", fcntl.lockf, rd, 0)

# flock: per open file, so two opens of one file conflict.
attempt("flock ex rd", fcntl.flock, rd, fcntl.LOCK_EX | fcntl.LOCK_NB)
attempt("flock sh rw", fcntl.flock, rw, fcntl.LOCK_SH | fcntl.LOCK_NB)
attempt("flock ex rd again", fcntl.flock, rd, fcntl.LOCK_EX | fcntl.LOCK_NB)
attempt("flock sh rd", fcntl.flock, rd, fcntl.LOCK_SH | fcntl.LOCK_NB)
attempt("flock sh rw", fcntl.flock, rw, fcntl.LOCK_SH | fcntl.LOCK_NB)
attempt("flock ex wr", fcntl.flock, wr, fcntl.LOCK_EX | fcntl.LOCK_NB)
attempt("flock un rd", fcntl.flock, rd, fcntl.LOCK_UN)
attempt("flock ex wr", fcntl.flock, wr, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.close(rw)
attempt("flock ex wr after close", fcntl.flock, wr, fcntl.LOCK_EX | fcntl.LOCK_NB)
attempt("flock sh rd", fcntl.flock, rd, fcntl.LOCK_SH | fcntl.LOCK_NB)
attempt("flock bad op", fcntl.flock, rd, 3)
attempt("flock only nb", fcntl.flock, rd, fcntl.LOCK_NB)
attempt("flock mand", fcntl.flock, rd, fcntl.LOCK_MAND | fcntl.LOCK_READ)
os.close(wr)
attempt("flock ex rd after", fcntl.flock, rd, fcntl.LOCK_EX | fcntl.LOCK_NB)
other = open(path, "rb")
attempt("flock file object", fcntl.flock, other, fcntl.LOCK_SH | fcntl.LOCK_NB)
other.close()
d = os.open("/tmp", os.O_RDONLY)
attempt("flock dir", fcntl.flock, d, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.close(d)

# ioctl: the requests the sandbox allows answer as for any file; any
# other is refused, whatever the descriptor.
FIONREAD, FIONBIO, TIOCGWINSZ, TCGETS, FIOCLEX, FIONCLEX = 0x541B, 0x5421, 0x5413, 0x5401, 0x5451, 0x5450
attempt("FIONREAD", fcntl.ioctl, rd, FIONREAD, b"\0" * 4)
attempt("FIONBIO", fcntl.ioctl, rd, FIONBIO, struct.pack("i", 1))
attempt("blocking after", os.get_blocking, rd)
attempt("FIONBIO off", fcntl.ioctl, rd, FIONBIO, struct.pack("i", 0))
attempt("blocking after", os.get_blocking, rd)
attempt("TIOCGWINSZ", fcntl.ioctl, rd, TIOCGWINSZ, b"\0" * 8)
attempt("TCGETS", fcntl.ioctl, rd, TCGETS, b"\0" * 64)
attempt("FIONCLEX", fcntl.ioctl, rd, FIONCLEX)
attempt("inheritable", os.get_inheritable, rd)
attempt("FIOCLEX", fcntl.ioctl, rd, FIOCLEX)
attempt("inheritable", os.get_inheritable, rd)
os.set_inheritable(rd, True)
attempt("GETFD after set_inheritable", fcntl.fcntl, rd, fcntl.F_GETFD)
attempt("GETPIPE_SZ file", fcntl.fcntl, rd, fcntl.F_GETPIPE_SZ)
attempt("ioctl bad fd", fcntl.ioctl, 99, FIONREAD, b"\0" * 4)
attempt("TCGETS bad fd", fcntl.ioctl, 99, TCGETS, b"\0" * 64)
attempt("stdout GETFD", fcntl.fcntl, 1, fcntl.F_GETFD)
attempt("stdout GETPIPE_SZ", fcntl.fcntl, 1, fcntl.F_GETPIPE_SZ)
# The standard streams' flags: stdin /dev/null, read-write; stdout and
# stderr the write ends of pipes.
for std in (0, 1, 2):
    attempt(f"fd {std} GETFL", fcntl.fcntl, std, fcntl.F_GETFL)
os.close(rd)
fresh = os.open(path, os.O_RDONLY)
attempt("a reused descriptor GETFD", fcntl.fcntl, fresh, fcntl.F_GETFD)
attempt("and its flock", fcntl.flock, fresh, fcntl.LOCK_EX | fcntl.LOCK_NB)
os.close(fresh)
os.unlink(path)

# os.lockf: the same record locks, glibc's lockf over fcntl (under wazero
# _apysup_fcntl.c's), and os.sync.
print("lockf names", [(n, getattr(os, n)) for n in ("F_LOCK", "F_TLOCK", "F_ULOCK", "F_TEST")])
with open(path, "wb") as f:
    f.write(b"0123456789")
rd = os.open(path, os.O_RDONLY)
rw = os.open(path, os.O_RDWR)
os.lseek(rw, 3, os.SEEK_SET)
for label, fd in (("rw", rw), ("rd", rd)):
    for cmd in ("F_TEST", "F_TLOCK", "F_LOCK", "F_TEST", "F_ULOCK"):
        attempt("lockf %s %s" % (label, cmd), os.lockf, fd, getattr(os, cmd), 4)
attempt("lockf whole file", os.lockf, rw, os.F_TLOCK, 0)
attempt("lockf bad command", os.lockf, rw, 7, 0)
attempt("lockf negative before the start", os.lockf, rw, os.F_TLOCK, -10)
attempt("lockf bad fd", os.lockf, 99, os.F_TLOCK, 0)
attempt("fcntl.lockf after os.lockf", fcntl.lockf, rw, fcntl.LOCK_EX | fcntl.LOCK_NB, 4)
os.close(rd)
os.close(rw)
attempt("sync", os.sync)
os.unlink(path)
