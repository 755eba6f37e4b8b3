# Flood the channel with connections that each announce a 1 MiB body and
# never send it, from two processes (each bounded by RLIMIT_NOFILE), then
# rename a process so the host knows the flood is in place, hold it, and
# finally make one honest call once the flood is gone.
import socket
import time

import probe

channel = json.load(open("/run/apysup/channel.json"))
head = (b"POST /v1/calls HTTP/1.1\r\nHost: apysup\r\nContent-Type: application/json\r\n"
        b"Authorization: Apysup-Credential " + channel["credential"].encode() + b"\r\n"
        b"Content-Length: 1048576\r\n\r\n{")


def flood(n):
    conns = []
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(1)
        try:
            s.connect(channel["socket"])
            s.sendall(head)
        except OSError:
            s.close()
            continue
        conns.append(s)
    return conns


r, w = os.pipe()
child = os.fork()
if child == 0:
    os.close(r)
    held = flood(200)
    os.write(w, b"%d\n" % len(held))
    time.sleep(4)
    os._exit(0)
os.close(w)
held = flood(200)
peer = int(os.read(r, 32))
info("connections", len(held) + peer)
libc.prctl(15, b"escape-flooding", 0, 0, 0)  # PR_SET_NAME: the host samples now
time.sleep(3)
libc.prctl(15, b"python3.11", 0, 0, 0)
for s in held:
    s.close()
os.waitpid(child, 0)
info("echo", probe.echo(text="after the flood"))
