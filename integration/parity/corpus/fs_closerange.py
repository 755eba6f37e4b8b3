# Closing descriptors the guest never opened. Natively nothing is open
# above stderr when the script starts; under wazero the mounts' directories
# (wazero's preopens, through which wasi-libc resolves every path) hold
# descriptors 3 to 13. A close of one answers EBADF there too and keeps
# the mount (python/wasi/_apysup_fcntl.c): code that tidies the
# descriptors it inherited, as a daemon does, cut the guest off from its
# files before.
import errno
import os


def attempt(label, call):
    try:
        print(label, call())
    except OSError as e:
        print(label, type(e).__name__, errno.errorcode[e.errno])


for fd in (3, 4, 13):
    attempt(f"close {fd}", lambda: os.close(fd))
os.closerange(3, 1024)
for fd in range(3, 64):
    try:
        os.close(fd)
    except OSError:
        pass

# Every mount still answers: the workspace, /tmp, /etc, the stdlib (a
# module not imported yet), the job's directory.
with open("closerange_kept.txt", "w") as f:
    f.write("still here\n")
print(open("closerange_kept.txt").read(), end="")
with open("/tmp/t.txt", "w") as f:
    f.write("tmp\n")
print(open("/tmp/t.txt").read(), end="")
print("passwd has root", any(line.startswith("root:") for line in open("/etc/passwd")))
import fractions  # noqa: E402  (after the closes, on purpose)

print(fractions.Fraction(3, 6))
print("job", sorted(os.listdir("/run/apysup/job"))[:1])
os.mkdir("closerange_dir")
os.rename("closerange_kept.txt", "closerange_dir/closerange_kept.txt")
print(sorted(os.listdir("closerange_dir")))

# A descriptor the script opened closes as ever, and is gone.
fd = os.open("closerange_dir/closerange_kept.txt", os.O_RDONLY)
os.close(fd)
attempt("close again", lambda: os.close(fd))
