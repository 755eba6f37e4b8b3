# errno numbers are WASI's, not Linux's: OSError(2, ...) is another class.
import errno
import os

print("ENOENT", errno.ENOENT, "EACCES", errno.EACCES, "EEXIST", errno.EEXIST, "EROFS", errno.EROFS)
print("OSError(2)", type(OSError(2, "x")).__name__, "OSError(13)", type(OSError(13, "x")).__name__)
print("strerror(2)", os.strerror(2))
try:
    os.mkdir(".")
except OSError as e:
    print("mkdir .", type(e).__name__, e.errno == errno.EEXIST)
