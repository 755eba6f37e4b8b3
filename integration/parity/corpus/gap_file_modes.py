# WASI has no permission bits: the guest sees mode 0 and chmod does nothing
# it can observe.
import os
import stat

with open("mode.txt", "w") as f:
    f.write("x")
st = os.stat("mode.txt")
print("file", stat.S_ISREG(st.st_mode), oct(st.st_mode & 0o777))
os.mkdir("dir")
print("dir", stat.S_ISDIR(os.stat("dir").st_mode), oct(os.stat("dir").st_mode & 0o777))
try:
    os.chmod("mode.txt", 0o600)
    print("chmod", oct(os.stat("mode.txt").st_mode & 0o777))
except OSError as e:
    print("chmod failed:", type(e).__name__)
print("uid", os.stat("mode.txt").st_uid, "nlink", os.stat("mode.txt").st_nlink)
