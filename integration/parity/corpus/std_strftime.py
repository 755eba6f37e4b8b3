# time.strftime is the C library's wcsftime: glibc's natively; under WASI
# python/wasi/_apysup_strftime.c, written to glibc's rules, where musl's
# lacked glibc's extensions (%k, %l, %P, the "^" and "#" flags, a field
# width) and failed a whole format on a conversion it does not know.
# datetime.strftime and logging's asctime go through the same call.
import datetime
import hashlib
import logging
import os
import time

t = time.localtime(1710079509)
for d in ["%Y-%m-%d %H:%M:%S", "%a %A %b %B %p %j %U %W %w %y %C %D %F %R %T %h %r %s",
          "%-d/%-m/%Y", "%_d", "%e", "%G-W%V-%u", "%c | %x | %X", "100%% done", "%Z %z",
          "%k", "%l", "%P", "%^a", "%#Z", "%10A", "%Q", "%", "%l:%M %P", "%-I:%M %p",
          "%A, %B %-d, %Y", "%^B %-e", "%_10H|", "%-10A|", "%010A", "%5z", "%-z", "%_z",
          "%010z", "%10s", "%010s", "%E%", "%5%", "%Ey %Oy %5Od %OC", "%Ea %OY %Ex %Od",
          "%#a %#b %#p %^#p %^P %#c %^c", "%99999999999d", "%2147483647d", "%3n%3t|"]:
    print(repr(d), repr(time.strftime(d, t)))

# Every printable conversion character under the flags, widths and
# modifiers glibc parses, at times that cover the ISO week edges, years
# before 1970 and past 9999's edge, and both kinds of struct tm (from
# localtime, with its zone, and a bare tuple, without), in two zones: one
# digest line per conversion character.
flags = ["", "_", "-", "0", "^", "#", "^#", "-0", "0_", "#_", "^-"]
widths = ["", "1", "3", "10"]
times = [1710079509, 1709611509, 0, -34560000, 1735603200, 1704067200,
         1609459200, 1230681600, 253402300799, -62135596800]
for zone in ["UTC", "America/New_York"]:
    os.environ["TZ"] = zone
    time.tzset()
    tms = []
    for s in times:
        lt = time.localtime(s)
        tms += [lt, tuple(lt), tuple(lt)[:8] + (-1,)]
    # glibc's localtime also sets tzname to the names in force at the
    # time it converted (year 1 in New York: LMT), which %Z of a struct tm
    # without a zone reads; musl's does not. A current time last.
    time.localtime(times[0])
    for code in range(32, 127):
        c = chr(code)
        h = hashlib.sha256()
        for fl in flags:
            for w in widths:
                for m in ["", "E", "O"]:
                    fmt = "%" + fl + w + m + c
                    for tm in tms:
                        h.update(("%s|%s\n" % (fmt, time.strftime(fmt, tm))).encode())
        print(zone, repr(c), h.hexdigest()[:16])

os.environ["TZ"] = "UTC"
time.tzset()
dt = datetime.datetime(2024, 3, 5, 4, 5, 9, 123456, tzinfo=datetime.timezone.utc)
print(dt.strftime("%k|%l|%P|%^a|%10A|%Q|%z|%Z|%f|%-d|%s"))
print(datetime.date(1999, 12, 31).strftime("%G %V %g %^b %#B"))
record = logging.makeLogRecord({"created": 1710079509.25, "msecs": 250.0})
print(logging.Formatter("%(asctime)s", datefmt="%l:%M %P %Q").format(record))
