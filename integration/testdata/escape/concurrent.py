# One of several runs at once. argv: INDEX TOKEN. Through the test's
# peers.meet capability (a barrier on the host) it learns the others' host
# pids and their channel credentials, then tries to signal them and to use
# their credentials on its own channel socket; a second barrier keeps every
# run alive until all have tried.
import signal
import socket

import peers

index = int(sys.argv[1])
report_host_uid()
with open("/tmp/mine-%d" % index, "w") as f:
    f.write(str(index))
channel = json.load(open("/run/apysup/channel.json"))
met = peers.meet(index=index, phase=1, channel=channel)
info("tmp", sorted(os.listdir("/tmp")))


def post_as(other):
    env = {"schema_version": "apysup.rpc.v1", "channel_id": other["channel_id"],
           "invocation_id": other["invocation_id"], "execution_id": other["execution_id"],
           "plan_sha256": other["plan_sha256"],
           "call": {"call_id": "main:program:2", "capability": "peers.meet",
                    "arguments": {"index": index, "phase": 9, "channel": {}}}}
    body = json.dumps(env).encode()
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(channel["socket"])  # our own socket: the only one there is
    s.sendall(b"POST /v1/calls HTTP/1.1\r\nHost: apysup\r\nContent-Type: application/json\r\n"
              b"Authorization: Apysup-Credential " + other["credential"].encode() + b"\r\n"
              b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body)
    data = b""
    while True:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    status = data.split(b" ", 2)[1].decode()
    doc = json.loads(data.split(b"\r\n\r\n", 1)[1])
    if doc.get("status") == "completed":
        emit("ESCAPED", "steal:peer%d" % peer["index"], status)
    else:
        emit("BLOCKED", "steal:peer%d" % peer["index"], "%s:%s" % (status, doc.get("error_code")))


for peer in met["peers"]:
    for pid in peer["host_pids"]:
        attempt("kill:peer%d" % peer["index"], os.kill, pid, signal.SIGKILL)
    post_as(peer["channel"])
peers.meet(index=index, phase=2, channel={})
control("survived", lambda: open("/tmp/mine-%d" % index).read() == str(index) or 1 / 0)
