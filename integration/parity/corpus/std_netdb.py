# Name resolution and sockets as the confined guest sees them: no network,
# /etc/hosts with localhost alone, no services or protocols files. Every
# outcome, result or error, is printed.
import socket


def show(label, fn):
    try:
        r = fn()
    except Exception as e:  # the error's type, arguments and message
        print(label, "!", type(e).__name__, e.args)
    else:
        print(label, "=", r)


def gai(*args, **kw):
    return [(int(f), int(t), p, c, a) for f, t, p, c, a in socket.getaddrinfo(*args, **kw)]


S, D, R = socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW
IN4, IN6 = socket.AF_INET, socket.AF_INET6
for host in ["localhost", "LOCALHOST", "localhost.", "127.0.0.1", "127.1", "0x7f.1", "127.0.0.1 ",
             "::1", "::ffff:127.0.0.1", "fe80::1%1", "fe80::1%lo", "0", "", None, "sandbox",
             "example.com", "ip6-localhost", "256.1.1.1", "1.2.3.4.5", "01.02.03.04"]:
    show(f"gai {host!r}", lambda: gai(host, 80))
for fam in [IN4, IN6, 12345]:
    for host in ["localhost", "127.0.0.1", "::1", None]:
        show(f"gai {host!r} fam {fam}", lambda: gai(host, 80, fam))
for t in [S, D, R, 99]:
    show(f"gai type {t}", lambda: gai("localhost", 80, 0, t))
for proto in [6, 17, 0, 132, 255]:
    show(f"gai proto {proto}", lambda: gai("localhost", 80, 0, 0, proto))
    show(f"gai stream proto {proto}", lambda: gai("localhost", 80, 0, S, proto))
for port in [None, 0, 80, "80", "http", "65535", 65536, 99999, -1, " 80", "80x", "", "0x50"]:
    show(f"gai port {port!r}", lambda: gai("127.0.0.1", port))
    show(f"gai raw port {port!r}", lambda: gai("127.0.0.1", port, 0, R))
for flags, name in [(socket.AI_PASSIVE, "passive"), (socket.AI_CANONNAME, "canon"),
                    (socket.AI_NUMERICHOST, "numerichost"), (socket.AI_NUMERICSERV, "numericserv"),
                    (socket.AI_V4MAPPED, "v4mapped"), (socket.AI_V4MAPPED | socket.AI_ALL, "v4mapped-all"),
                    (socket.AI_ADDRCONFIG, "addrconfig"), (0x10000, "bad")]:
    for host in ["localhost", "127.0.0.1", "::1", None]:
        show(f"gai {name} {host!r}", lambda: gai(host, 80, 0, S, 0, flags))
        show(f"gai {name} {host!r} v6", lambda: gai(host, 80, IN6, S, 0, flags))
    show(f"gai {name} http", lambda: gai("localhost", "http", 0, S, 0, flags))
for host in ["localhost", "127.0.0.1", "127.1", "::1", "", "<broadcast>", "sandbox", "example.com"]:
    show(f"ghbn {host!r}", lambda: socket.gethostbyname(host))
    show(f"ghbn_ex {host!r}", lambda: socket.gethostbyname_ex(host))
for addr in ["127.0.0.1", "::1", "127.0.0.2", "8.8.8.8", "localhost", "sandbox", "::"]:
    show(f"ghba {addr!r}", lambda: socket.gethostbyaddr(addr))
for sa in [("127.0.0.1", 80), ("127.0.0.1", 0), ("::1", 443), ("::1", 443, 0, 1), ("10.0.0.1", 22),
           ("localhost", 80), ("example.com", 80), ("127.0.0.1", 70000)]:
    for flags in [0, socket.NI_NUMERICHOST, socket.NI_NUMERICSERV, socket.NI_NAMEREQD, socket.NI_DGRAM]:
        show(f"gni {sa} {flags}", lambda: socket.getnameinfo(sa, flags))
show("fqdn", socket.getfqdn)
for n in ["localhost", "127.0.0.1", "example.com", "", "::1"]:
    show(f"fqdn {n!r}", lambda: socket.getfqdn(n))
show("gsbn http", lambda: socket.getservbyname("http"))
show("gsbn http tcp", lambda: socket.getservbyname("http", "tcp"))
show("gsbp 80", lambda: socket.getservbyport(80))
show("gsbp 80 udp", lambda: socket.getservbyport(80, "udp"))
show("gpbn tcp", lambda: socket.getprotobyname("tcp"))
show("has_ipv6", lambda: socket.has_ipv6)
show("inet_pton6", lambda: socket.inet_pton(IN6, "::1"))
show("inet_ntop6", lambda: socket.inet_ntop(IN6, b"\0" * 15 + b"\1"))
# inet_ntoa, which wasi-libc leaves out (it was missing from socket under
# wazero), and inet_aton's forms.
for packed in (b"\x7f\0\0\1", b"\xc0\xa8\x01\x01", b"\0" * 4, b"\xff" * 4, b"\1\2\3", b"\1" * 5, "1234"):
    show(f"inet_ntoa {packed!r}", lambda: socket.inet_ntoa(packed))
for text in ("127.0.0.1", "10.1", "0x7f.1", "1.2.3.4.5", "256.1.1.1", "", " 1.2.3.4"):
    show(f"inet_aton {text!r}", lambda: socket.inet_aton(text))
for fam, typ in [(IN4, S), (IN4, D), (IN6, S), (IN6, D)]:
    show(f"socket {fam} {typ}", lambda: socket.socket(fam, typ).close())
show("create_connection", lambda: socket.create_connection(("127.0.0.1", 9), timeout=1))
show("create_connection name", lambda: socket.create_connection(("localhost", 9), timeout=1))
show("create_connection remote", lambda: socket.create_connection(("example.com", 80), timeout=1))
show("create_server", lambda: socket.create_server(("127.0.0.1", 0)))
print("resolver constants", {k: int(getattr(socket, k)) for k in sorted(dir(socket))
                             if k.startswith(("AI_", "NI_", "EAI_"))})
names = ["AF_UNSPEC", "AF_INET", "AF_INET6", "SOCK_STREAM", "SOCK_DGRAM", "SOCK_RAW", "SOCK_RDM",
         "SOCK_SEQPACKET", "SOCK_NONBLOCK", "SOCK_CLOEXEC", "SOL_SOCKET", "SO_TYPE", "SOMAXCONN",
         "SHUT_RD", "SHUT_WR", "SHUT_RDWR", "IPPROTO_TCP", "IPPROTO_UDP", "IPPROTO_IPV6", "IPV6_V6ONLY"]
names += [k for k in dir(socket) if k.startswith("MSG_")]
print("socket constants", {k: int(getattr(socket, k)) for k in sorted(set(names))})
print("enums", repr(socket.AF_INET), repr(socket.SOCK_STREAM), repr(socket.AddressInfo.AI_CANONNAME))
import urllib.request
import urllib.error
try:
    urllib.request.urlopen("http://example.com/", timeout=2)
except urllib.error.URLError as e:
    print("urlopen URLError", repr(e.reason))
try:
    urllib.request.urlopen("http://127.0.0.1:8080/", timeout=2)
except urllib.error.URLError as e:
    print("urlopen local URLError", repr(e.reason))
import http.client
show("http.client", lambda: http.client.HTTPConnection("example.com", timeout=2).request("GET", "/"))
import asyncio
show("asyncio open_connection", lambda: asyncio.run(asyncio.open_connection("example.com", 80)))


async def loop_getaddrinfo():
    return await asyncio.get_running_loop().getaddrinfo("localhost", 80, type=S)


show("asyncio getaddrinfo", lambda: [(int(f), int(t), p, c, a) for f, t, p, c, a in asyncio.run(loop_getaddrinfo())])
