# The right/ zones count leap seconds. glibc applies them (local time is
# the count of seconds less the leap seconds so far: 27 since 1972); the
# WASI build's time zone code is musl's, which reads the zone's names and
# offsets but not its leap seconds (RATIONALE.md, "chown, directory
# descriptors, sendfile and local time under WASI").
import os
import time

os.environ["TZ"] = "right/UTC"
time.tzset()
lt = time.localtime(1700000000)
print(time.tzname, time.strftime("%Y-%m-%d %H:%M:%S %Z", lt), time.mktime(lt))
