# One of several runs at once. argv: INDEX TOKEN. Through the test's
# peers.meet capability (a barrier on the host) it learns the others' host
# pids (two each: the guest init, pid 1 of the peer's namespace, and its
# child, the script) and their channel credentials, then tries to signal them and
# to use their credentials on its own channel socket; a second barrier
# keeps every run alive until all have tried.
import signal

import peers

index = int(sys.argv[1])
report_host_uid()
with open("/tmp/mine-%d" % index, "w") as f:
    f.write(str(index))
channel = json.load(open("/run/apysup/channel.json"))
met = peers.meet(index=index, phase=1, channel=channel)
info("tmp", sorted(os.listdir("/tmp")))


def kill_all(name, pids):
    """SIGKILL every host pid of a peer (its init, pid 1 of its namespace,
    and its script): one marker for them all. ESCAPED if any signal got
    through; BLOCKED only if every one was refused, with the reasons."""
    if not pids:
        emit("FAILED", name, "no-host-pids")  # the probe would be vacuous
        return
    reasons, escaped = set(), []
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except Exception as exc:
            reasons.add(_reason(exc))
        else:
            escaped.append(pid)
    if escaped:
        emit("ESCAPED", name, "signalled host pids %s" % escaped)
    else:
        emit("BLOCKED", name, "+".join(sorted(reasons)))


for peer in met["peers"]:
    kill_all("kill:peer%d" % peer["index"], peer["host_pids"])
    # The peer's valid credentials, presented on our own (the only) socket.
    call = {"call_id": "main:program:2", "capability": "peers.meet",
            "arguments": {"index": index, "phase": 9, "channel": {}}}
    rpc_attempt("steal:peer%d" % peer["index"], channel["socket"], envelope_for(peer["channel"], call),
                peer["channel"]["credential"])
peers.meet(index=index, phase=2, channel={})
control("survived", lambda: open("/tmp/mine-%d" % index).read() == str(index) or 1 / 0)
