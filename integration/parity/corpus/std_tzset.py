# Local time under TZ, on both backends: time.tzset, localtime, mktime,
# strftime and datetime's local conversions, for POSIX rules, zoneinfo
# names and paths, and TZ strings that name no file (glibc reads them as
# a POSIX name at UTC+0; a DST name without rules takes the United
# States' rules, glibc's posixrules). wasi-libc's local time is UTC
# alone; the WASI build links musl's time zone code instead
# (python/wasi/patches/musl/wasi-tz.patch).
import datetime
import os
import time

print("start", time.tzname, time.timezone, time.altzone, time.daylight)
winter, summer = 1700000000, 1690000000
for tz in ("EST+05EDT,M3.2.0,M11.1.0", "AEST-10AEDT-11,M10.5.0,M3.5.0", "UTC", "UTC+0", "GMT0", "EST5EDT",
           "EST+05", "<+0330>-3:30", "CET-1CEST,M3.5.0,M10.5.0/3", "Europe/Berlin", ":America/New_York",
           "/usr/share/zoneinfo/Asia/Tokyo", "Australia/Lord_Howe", "PST8PDT",
           "ABC+5DEF", "Nowhere/Missing", "XYZ", "LongZoneName+3", "", ":", "/etc/localtime", "/no/such/file",
           "../etc/passwd"):
    os.environ["TZ"] = tz
    time.tzset()
    w, s = time.localtime(winter), time.localtime(summer)
    print(repr(tz), time.tzname, time.timezone, time.altzone, time.daylight,
          w.tm_hour, w.tm_isdst, w.tm_zone, w.tm_gmtoff, s.tm_hour, s.tm_isdst, s.tm_zone, s.tm_gmtoff,
          time.strftime("%Z %z", w), time.mktime(w), time.mktime(s),
          time.mktime((2023, 3, 26, 2, 30, 0, 0, 0, -1)))
os.environ["TZ"] = "Europe/Berlin"
time.tzset()
print(datetime.datetime.fromtimestamp(winter).isoformat(), datetime.datetime.fromtimestamp(winter).astimezone().isoformat(),
      datetime.datetime(2023, 7, 1).astimezone().tzname(), datetime.datetime(2023, 7, 1).timestamp(),
      time.ctime(summer), time.asctime(time.localtime(summer)))
del os.environ["TZ"]
time.tzset()
print("unset", time.tzname, time.timezone, time.localtime(winter).tm_zone, time.localtime(winter).tm_hour)
# TZ changed without time.tzset(): glibc's localtime_r (time.localtime,
# datetime's local conversions) keeps the zone it read, until tzset or a
# call that reads TZ again itself (mktime; strftime's %Z of a struct
# without a zone); musl read it again at every conversion.
os.environ["TZ"] = "Europe/Berlin"
time.tzset()
os.environ["TZ"] = "Asia/Tokyo"
print("no tzset", time.localtime(winter).tm_hour, time.localtime(winter).tm_zone, time.tzname,
      datetime.datetime.fromtimestamp(winter).hour, datetime.datetime.fromtimestamp(winter).astimezone().tzname(),
      time.strftime("%H %Z", time.localtime(winter)), time.ctime(winter))
print("mktime", time.mktime((2023, 11, 14, 12, 0, 0, 0, 0, -1)), time.localtime(winter).tm_hour,
      time.localtime(winter).tm_zone, time.tzname)
os.environ["TZ"] = "America/New_York"
print("strftime", time.strftime("%Z", (2023, 11, 14, 12, 0, 0, 1, 318, 0)), time.localtime(winter).tm_zone)
time.tzset()
# gmtime's zone is "GMT" in glibc's struct tm ("UTC" in musl's): tm_zone,
# and strftime's %Z of it, as logging's Formatter with converter=gmtime
# prints it.
g = time.gmtime(winter)
print("gmtime", g.tm_zone, g.tm_gmtoff, time.strftime("%Z %z", g), time.strftime("%Y-%m-%d %H:%M:%S %Z", time.gmtime(0)))
