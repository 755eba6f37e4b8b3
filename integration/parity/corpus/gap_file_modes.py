# WASI has no permission bits: the guest sees mode 0 and chmod does nothing
# it can observe.
import os
import stat

# Only the seed's files are looked at: the modes of files a guest creates
# are the workspace's business (compared by fs_workspace.py).
st = os.stat("input.txt")
print("file", stat.S_ISREG(st.st_mode), oct(st.st_mode & 0o777))
print("dir", stat.S_ISDIR(os.stat("sub").st_mode), oct(os.stat("sub").st_mode & 0o777))
try:
    os.chmod("input.txt", 0o600)
    print("chmod", oct(os.stat("input.txt").st_mode & 0o777))
    os.chmod("input.txt", 0o644)
except OSError as e:
    print("chmod failed:", type(e).__name__)
print("uid", st.st_uid, "nlink", st.st_nlink, "size", st.st_size)
