# time.mktime with a tm_isdst the zone does not have at that time, as
# glibc reads it: with the UTC offset of the nearest time that has it (in
# steps of a week, up to about seven years either way), else an hour's
# difference, so that tm_isdst 1 in UTC is an hour earlier. The common
# time.mktime(aware.timetuple()) of a summer datetime passes tm_isdst 1.
# Under wazero the WASI build's mktime is musl's, which took the zone's
# other offset, none in a zone without daylight saving time
# (python/wasi/patches/musl/wasi-tz.patch).
import datetime
import os
import time
import zoneinfo

CASES = [
    (2023, 1, 15, 12, 0),   # winter in the north
    (2023, 7, 15, 12, 0),   # summer in the north
    (2023, 3, 26, 2, 30),   # the spring gap in Europe
    (2000, 6, 1, 0, 0),
    (2016, 12, 1, 6, 0),
]
ZONES = ["UTC", "Asia/Tokyo", "Europe/Berlin", "America/New_York", "America/Sao_Paulo",
         "Australia/Lord_Howe", "Europe/Moscow", "Asia/Kolkata", "EST5EDT", "JST-9", "CET-1CEST,M3.5.0,M10.5.0/3"]
for zone in ZONES:
    os.environ["TZ"] = zone
    time.tzset()
    for y, mo, d, h, mi in CASES:
        row = []
        for isdst in (-1, 0, 1):
            row.append(int(time.mktime((y, mo, d, h, mi, 0, 0, 0, isdst))))
        print(zone, f"{y}-{mo:02}-{d:02} {h:02}:{mi:02}", row, [r - row[0] for r in row])

# The idiom: a summer datetime of another zone, read in UTC.
os.environ["TZ"] = "UTC"
time.tzset()
aware = datetime.datetime(2023, 7, 1, 12, tzinfo=zoneinfo.ZoneInfo("Europe/Paris"))
print("timetuple isdst", aware.timetuple().tm_isdst, "mktime", time.mktime(aware.timetuple()), "timestamp", aware.timestamp())
