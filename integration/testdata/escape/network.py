# No network but AF_UNIX, and no way to the host's sockets.
# argv: TCP_PORT ABSTRACT_NAME (both listened on by the test on the host)
# and the number of the socket call.
import socket

port, abstract, SYS_socket = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])

FAMILIES = ["AF_INET", "AF_INET6", "AF_NETLINK", "AF_PACKET", "AF_ALG", "AF_VSOCK", "AF_KEY", "AF_TIPC",
            "AF_BLUETOOTH", "AF_CAN", "AF_RDS", "AF_QIPCRTR"]
for fam in FAMILIES:
    for typ in ("SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW"):
        attempt("socket:%s:%s" % (fam, typ), socket.socket, getattr(socket, fam), getattr(socket, typ))
# Raw numbers too, in case a constant were missing: every family but AF_UNIX (1).
for fam in range(0, 46):
    if fam != socket.AF_UNIX:
        attempt("socket:raw:%d" % fam, raw_syscall, SYS_socket, fam, socket.SOCK_STREAM, 0)
attempt("socketpair:AF_INET", socket.socketpair, socket.AF_INET)
attempt("tcp:127.0.0.1", socket.create_connection, ("127.0.0.1", port), 2)
attempt("tcp:localhost", socket.create_connection, ("localhost", port), 2)
attempt("tcp6:::1", socket.create_connection, ("::1", port), 2)
attempt("dns:example.com", socket.getaddrinfo, "example.com", 80)


def connect_unix(addr):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.settimeout(2)
        s.connect(addr)
        s.sendall(b"escaped\n")
        return "connected"
    finally:
        s.close()


attempt("unix:abstract", connect_unix, "\0" + abstract)
attempt("unix:abstract-dgram", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM).sendto(b"x", "\0" + abstract))

own = socket.socket(socket.AF_UNIX)
control("unix:listen-own-abstract", own.bind, "\0guest-" + abstract)

# What the network namespace holds.
info("interfaces", sorted(l.split(":")[0].strip() for l in open("/proc/net/dev").read().splitlines()[2:]))
tcp = [l.split()[1:3] for l in open("/proc/net/tcp").read().splitlines()[1:]]
info("tcp", tcp)
unix = [l.split()[-1] for l in open("/proc/net/unix").read().splitlines()[1:] if len(l.split()) > 7]
info("unix_names", sorted(set(unix)))

