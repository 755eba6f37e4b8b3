# /tmp is a tmpfs of 64 MiB natively, which charges each file's data in
# whole pages: files of 5,000 bytes cost two pages each, and 8,192 fit.
# Under wazero the budget charged the bytes themselves, and 13,421 fit
# (the seventh differential hunt); it charges pages now.
import errno
import os

data = b"x" * 5000
n = 0
while True:
    try:
        with open("/tmp/f%05d" % n, "wb") as f:
            f.write(data)
        n += 1
    except OSError as e:
        print("stopped", errno.errorcode[e.errno])
        break
print("files of 5000 bytes", n)
st = os.statvfs("/tmp")
print("blocks free", st.f_bfree, "of", st.f_blocks)
for i in range(0, n, 2):
    os.unlink("/tmp/f%05d" % i)
with open("/tmp/f%05d" % 1, "ab") as f:  # fill its second page: no new page
    f.write(b"y" * (8192 - 5000))
print("after removing half", os.statvfs("/tmp").f_bfree)
