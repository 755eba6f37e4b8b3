# Seeking past the end of a file, and reading there: Linux allows any
# offset, and a read past the end is empty. Under wazero the files of the
# generated /etc, the job (the script itself) and /opt/apysup were EINVAL
# for such a seek or pread: they are served from memory, with io.Seeker's
# rules (internal/sandbox/wazero/readonly.go, pastEnd).
import os
import sys

with open("/tmp/w.txt", "w") as f:
    f.write("abc")
for label, path in (("etc", "/etc/passwd"), ("script", sys.argv[0]), ("tmp", "/tmp/w.txt"),
                    ("stdlib", os.__file__)):
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        print(label, "seek", f.seek(size + 10**6) - size, f.read(), f.tell() - size)
        print(label, "relative", f.seek(-(10**6), 1) - size, f.seek(5, 2) - size, f.read(4))
        f.seek(0)
        f.read()
        print(label, "after reading all", f.seek(1, 1) - size, f.read())
    fd = os.open(path, os.O_RDONLY)
    print(label, "lseek", os.lseek(fd, size + 7, os.SEEK_SET) - size, os.read(fd, 4),
          os.lseek(fd, 3, os.SEEK_END) - size, os.pread(fd, 4, size + 100), os.pread(fd, 2, size - 2) != b"")
    try:
        os.lseek(fd, -1, os.SEEK_SET)
    except OSError as e:
        print(label, "before the start", e.errno)
    os.close(fd)
