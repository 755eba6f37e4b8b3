# socket.inet_aton and inet_ntop as glibc answers them. inet_aton takes
# an address followed by whitespace and anything after it, as a line read
# from a file has ("10.0.0.1\n", "10.0.0.1 # gateway"), and refuses a
# number past 32 bits; under wazero musl's refused the first and took the
# second cut to 32 bits. inet_ntop writes the first of two equally long
# runs of zeros as "::", and ::a.b.c.d for an address whose first 96 bits
# are zero (python/wasi/_apysup_netdb.c).
import socket
import struct

for text in ["10.0.0.1", "10.0.0.1\n", "10.0.0.1 # gateway", "10.0.0.1\t", "10.0.0.1#x", "10.1", "0x7f.1",
             "017.0.0.1", "4294967295", "4294967296", "1.2.3.256", "1.2.3.4.5", " 1.2.3.4", "", "08.1.1.1"]:
    try:
        print(repr(text), struct.unpack("!I", socket.inet_aton(text))[0])
    except OSError as e:
        print(repr(text), "OSError:", e)

blocklist = ["192.168.0.1\n", "10.0.0.7   # printer\n", "not an address\n", "172.16.4.20\n"]
print("parsed from lines:", [socket.inet_ntoa(socket.inet_aton(line)) for line in blocklist if line[0].isdigit()])

for text in ["::", "::1", "::1.2.3.4", "::ffff:1.2.3.4", "0:0:1:0:0:1:0:0", "1:0:0:2:0:0:0:3", "1::", "fe80::1",
             "2001:db8:0:0:1:0:0:1", "0:0:0:0:0:1:0:0", "::ffff:0:0", "1:2:3:4:5:6:7:8", "::0.0.0.2", "0:0:0:0:0:0:1:0"]:
    packed = socket.inet_pton(socket.AF_INET6, text)
    print(text, "->", socket.inet_ntop(socket.AF_INET6, packed))
print(socket.inet_ntop(socket.AF_INET, b"\x7f\x00\x00\x01"))
