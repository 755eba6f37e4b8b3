# One of several runs at once. argv: INDEX TOKEN. Through the test's
# peers.meet capability (a barrier on the host) it learns the others' host
# pids and their channel credentials, then tries to signal them and to use
# their credentials on its own channel socket; a second barrier keeps every
# run alive until all have tried.
import signal

import peers

index = int(sys.argv[1])
report_host_uid()
with open("/tmp/mine-%d" % index, "w") as f:
    f.write(str(index))
channel = json.load(open("/run/apysup/channel.json"))
met = peers.meet(index=index, phase=1, channel=channel)
info("tmp", sorted(os.listdir("/tmp")))


for peer in met["peers"]:
    for pid in peer["host_pids"]:
        attempt("kill:peer%d" % peer["index"], os.kill, pid, signal.SIGKILL)
    # The peer's valid credentials, presented on our own (the only) socket.
    call = {"call_id": "main:program:2", "capability": "peers.meet",
            "arguments": {"index": index, "phase": 9, "channel": {}}}
    rpc_attempt("steal:peer%d" % peer["index"], channel["socket"], envelope_for(peer["channel"], call),
                peer["channel"]["credential"])
peers.meet(index=index, phase=2, channel={})
control("survived", lambda: open("/tmp/mine-%d" % index).read() == str(index) or 1 / 0)
