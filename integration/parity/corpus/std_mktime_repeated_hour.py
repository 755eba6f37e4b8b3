# time.mktime of a local time the clocks repeat (where they go back), with
# tm_isdst -1, as glibc answers it: glibc starts its search from the UTC
# offset its previous mktime found (0 before the first), so the answer is
# the earlier of the two after a call in summer time and the later after
# one in winter, whatever the zone. Under wazero the WASI build's mktime
# is musl's, which always took the earlier
# (python/wasi/patches/musl/wasi-tz.patch).
import os
import time

REPEATED = {
    "America/New_York": [(2024, 11, 3, 1, 30), (2038, 11, 7, 1, 30), (2100, 11, 7, 1, 15)],
    "Europe/Berlin": [(2024, 10, 27, 2, 30), (2038, 10, 31, 2, 30), (2060, 10, 31, 2, 59)],
    "Australia/Sydney": [(2024, 4, 7, 2, 30)],
    "Australia/Lord_Howe": [(2024, 4, 7, 1, 45)],  # a half hour repeated
    "Europe/London": [(1996, 10, 27, 1, 0)],
    "CET-1CEST,M3.5.0,M10.5.0/3": [(2024, 10, 27, 2, 30)],
}
BEFORE = [None, (2024, 7, 1, 12, 0), (2024, 1, 15, 12, 0), "other zone"]


def mktime(fields, isdst=-1):
    y, mo, d, h, mi = fields
    return time.mktime((y, mo, d, h, mi, 0, 0, 1, isdst))


for zone, times in REPEATED.items():
    for before in BEFORE:
        for fields in times:
            if before == "other zone":
                os.environ["TZ"] = "Asia/Tokyo"
                time.tzset()
                mktime((2024, 6, 1, 12, 0))
            os.environ["TZ"] = zone
            time.tzset()
            if isinstance(before, tuple):
                mktime(before)
            t = mktime(fields)
            print(zone, fields, "after", before, "->", t, time.strftime("%H:%M %Z", time.localtime(t)))
    # Asked with tm_isdst 0 or 1, the answer does not depend on the past.
    for isdst in (0, 1):
        print(zone, "isdst", isdst, [mktime(f, isdst) for f in times])
