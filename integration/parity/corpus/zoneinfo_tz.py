# IANA time zones come from the host's tzdata, where there is one; the
# search path from sysconfig.
import datetime
import sysconfig

print("TZPATH config var", sysconfig.get_config_var("TZPATH"))
import zoneinfo

print("TZPATH", zoneinfo.TZPATH)
for key in ("UTC", "Europe/Paris"):
    try:
        z = zoneinfo.ZoneInfo(key)
        print(key, datetime.datetime(2024, 7, 1, 12, tzinfo=z).utcoffset())
    except Exception as e:
        print(key, "failed:", type(e).__name__)
print("fixed offsets work:", datetime.datetime(2024, 7, 1, 12, tzinfo=datetime.timezone(datetime.timedelta(hours=2))).isoformat())
