# The capability channel is reachable and is the one door: a granted call
# works, an ungranted one is denied, and requests that do not carry this
# run's exact credentials are rejected before any dispatch.
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
    env = envelope_for(channel, {"call_id": "main:program:3", "capability": "probe.echo",
                                 "arguments": {"text": "forged"}})
    env.update(override)
    rpc_attempt(name, channel["socket"], env, credential)


good = channel["credential"]
flipped = ("A" if good[0] != "A" else "B") + good[1:]
post("rpc:no-credential", None)
post("rpc:wrong-credential", flipped)
post("rpc:other-plan", good, plan_sha256="sha256:" + "0" * 64)
post("rpc:other-execution", good, execution_id="run-000000000000000000000000")
post("rpc:other-channel", good, channel_id="chn-000000000000000000000000")
post("rpc:other-invocation", good, invocation_id="inv-000000000000000000000000")
info("run_dir", sorted(os.listdir("/run/apysup")))
