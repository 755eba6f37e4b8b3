# strftime is the C library's: glibc natively, musl under WASI. The POSIX
# conversions and the "-", "_" and "0" flags agree (std_datetime-style
# formats: "%Y-%m-%d %H:%M:%S", "%-d %b", "%I:%M %p", ...); glibc's
# extensions do not exist in musl, whose strftime then fails as a whole,
# which Python reports as an empty string.
import time

t = time.localtime(1710079509)
same = ["%Y-%m-%d %H:%M:%S", "%a %A %b %B %p %j %U %W %w %y %C %D %F %R %T %h %r %s",
        "%-d/%-m/%Y", "%_d", "%e", "%G-W%V-%u", "%c | %x | %X", "100%% done", "%Z %z"]
for d in same:
    print(repr(d), repr(time.strftime(d, t)))
for d in ["%k", "%l", "%P", "%^a", "%#Z", "%10A", "%Q", "%"]:
    print("extension", repr(d), repr(time.strftime(d, t)))
