# The capability channel is reachable and is the one door: a granted call
# works, an ungranted one is denied, and requests that do not carry this
# run's exact credentials are rejected before any dispatch.
import socket

import agent_runtime
import probe

try:
    info("echo", probe.echo(text="through the door"))
    emit("ALLOWED", "capability:probe.echo")
except Exception as exc:
    emit("FAILED", "capability:probe.echo", _reason(exc))

try:
    agent_runtime._capability_call("not.granted", {})
    emit("ESCAPED", "capability:not.granted", "dispatched")
except agent_runtime.CapabilityError as exc:
    emit("BLOCKED", "capability:not.granted", exc.error_code)

channel = json.load(open("/run/apysup/channel.json"))


def post(name, credential, **override):
    """POST one call frame by hand; BLOCKED unless the host completed it."""
    env = {"schema_version": "apysup.rpc.v1", "channel_id": channel["channel_id"],
           "invocation_id": channel["invocation_id"], "execution_id": channel["execution_id"],
           "plan_sha256": channel["plan_sha256"],
           "call": {"call_id": "main:program:3", "capability": "probe.echo", "arguments": {"text": "forged"}}}
    env.update(override)
    body = json.dumps(env).encode()
    head = b"POST /v1/calls HTTP/1.1\r\nHost: apysup\r\nContent-Type: application/json\r\n"
    if credential is not None:
        head += b"Authorization: Apysup-Credential " + credential.encode() + b"\r\n"
    head += b"Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(channel["socket"])
    s.sendall(head + body)
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
        emit("ESCAPED", name, status)
    else:
        emit("BLOCKED", name, "%s:%s" % (status, doc.get("error_code")))


good = channel["credential"]
flipped = ("A" if good[0] != "A" else "B") + good[1:]
post("rpc:no-credential", None)
post("rpc:wrong-credential", flipped)
post("rpc:other-plan", good, plan_sha256="sha256:" + "0" * 64)
post("rpc:other-execution", good, execution_id="run-000000000000000000000000")
post("rpc:other-channel", good, channel_id="chn-000000000000000000000000")
post("rpc:other-invocation", good, invocation_id="inv-000000000000000000000000")
info("run_dir", sorted(os.listdir("/run/apysup")))
