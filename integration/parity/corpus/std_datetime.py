import calendar
import datetime as dt

d = dt.datetime(2024, 2, 29, 13, 45, 30, 123456)
print(d.isoformat(), d.strftime("%A %d %B %Y %H:%M:%S.%f"), d.weekday())
print(d + dt.timedelta(days=366, hours=-3))
utc = d.replace(tzinfo=dt.timezone.utc)
print(utc.astimezone(dt.timezone(dt.timedelta(hours=5, minutes=30))).isoformat())
print(utc.timestamp(), dt.datetime.fromtimestamp(1700000000, dt.timezone.utc))
print(dt.date(2000, 1, 1).toordinal(), dt.date.fromisoformat("1999-12-31").isocalendar())
print(dt.datetime.strptime("03/07/21 09:05", "%d/%m/%y %H:%M"))
print(calendar.isleap(2100), calendar.monthrange(2024, 2))
print(calendar.month(2024, 2))
