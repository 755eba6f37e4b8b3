# The times of the files a script did not write: the script itself, the
# generated /etc, the stdlib, the root, /dev. Under wazero the files served
# from memory carried Go's zero time, which wazero turned into a day in
# 2339: a script's own mtime lay in the future, and zipfile refused to
# store the script (a zip's dates end in 2107). Natively they are dated
# when the sandbox makes them, or by Debian's package; the stdlib's sources
# carry the Debian revision's date on both backends
# (python/wasi/mkstdlib.py).
import json
import os
import shutil
import sys
import time
import zipfile

now = time.time()
for label, path in (("script", sys.argv[0]), ("job", os.path.dirname(sys.argv[0])), ("etc", "/etc/passwd"),
                    ("etc dir", "/etc"), ("stdlib dir", os.path.dirname(os.__file__)), ("root", "/"),
                    ("usr", "/usr"), ("devnull", os.devnull), ("dev", "/dev"), ("opt", "/opt/apysup")):
    st = os.stat(path)
    times = (st.st_atime, st.st_mtime, st.st_ctime)
    print(label, all(315532800 <= t <= now + 1 for t in times))  # 1980 .. now
print("script is recent", now - os.path.getmtime(sys.argv[0]) < 600)
# The stdlib's sources: Debian's date of the revision, the same on both.
for mod in (os, json, shutil):
    print(mod.__name__, time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(os.stat(mod.__file__).st_mtime)))
with zipfile.ZipFile("/tmp/self.zip", "w") as z:
    z.write(sys.argv[0], "script.py")
    z.write("/etc/passwd", "passwd")
    z.write(os.__file__, "os.py")
with zipfile.ZipFile("/tmp/self.zip") as z:
    print([(i.filename, i.date_time[0] >= 1980) for i in z.infolist()])
shutil.copy2("/etc/hostname", "/tmp/hostname")
print("copy2 keeps a real date", os.path.getmtime("/tmp/hostname") <= now + 1)
