# pwrite on a file opened for appending: Linux writes at the end whatever
# the offset says, and leaves the descriptor's offset where it was. Under
# wazero it was ENOSPC (the host refused it as Go's WriteAt does, EIO,
# which the WASI build's writes answer as a full disk) and nothing was
# written (internal/sandbox/wazero/quota.go, sizedFile.Pwrite).
import os

with open("log.txt", "w") as f:
    f.write("hello")
fd = os.open("log.txt", os.O_RDWR | os.O_APPEND)
print("read", os.read(fd, 2))
print("pwrite", os.pwrite(fd, b"PW", 0))
print("offset kept", os.lseek(fd, 0, os.SEEK_CUR))
print("read on", os.read(fd, 20))
print("pwritev", os.pwritev(fd, [b"a", b"bc"], 1))
os.close(fd)
with open("log.txt", "a+b") as f:
    print("a+b pwrite", os.pwrite(f.fileno(), b"Q", 1))
    f.seek(0)
    print("a+b read", f.read())
with open("log.txt", "rb") as f:
    print(f.read(), os.path.getsize("log.txt"))
os.remove("log.txt")
