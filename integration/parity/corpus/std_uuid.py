# uuid as agents use it, identical on both backends: uuid1 from Debian's
# libuuid (util-linux 2.38.1, which the WASI build compiles from Debian's
# source), which in the sandbox has neither the uuidd daemon nor its clock
# file, so its UUIDs are unsafe (SafeUUID.unsafe) and its node is random
# with the multicast bit set (no network interface to read); uuid3, 4 and 5.
import datetime
import uuid

print("_uuid:", uuid._uuid is not None, uuid._has_uuid_generate_time_safe)
a, b = uuid.uuid1(), uuid.uuid1()
print("uuid1:", a.version, a.variant, a.is_safe, b.is_safe, a != b, a.node == b.node, a.time < b.time)
print("node multicast:", (a.node >> 40) & 1, 0 < a.node < 1 << 48)
when = datetime.datetime(1582, 10, 15) + datetime.timedelta(microseconds=a.time // 10)
print("time is now:", abs((when - datetime.datetime.utcnow()).total_seconds()) < 60)
node = uuid.getnode()
print("getnode:", (node >> 40) & 1, node == uuid.getnode())
c = uuid.uuid1(node=0x123456789abc, clock_seq=0x1234)
print("uuid1 given node:", c.node == 0x123456789abc, c.clock_seq, c.is_safe)
print("uuid3:", uuid.uuid3(uuid.NAMESPACE_DNS, "example.org"))
print("uuid5:", uuid.uuid5(uuid.NAMESPACE_URL, "https://example.org/a"))
r = uuid.uuid4()
print("uuid4:", r.version, r.variant, len(str(r)), r != uuid.uuid4())
print("parse:", uuid.UUID("{12345678-1234-5678-1234-567812345678}").hex, uuid.UUID(int=1).urn)
