# A call's result, byte for byte, as _agent_runtime_host.call returns it:
# natively the guest's decode writes it from the host's envelope; under
# wazero the host hands over the Broker's canonical bytes as they are
# (internal/sandbox/wazero, guestAnswer). Both must be the same bytes, and
# so the same values, types and key order after agent_runtime's loads.
import _agent_runtime_host
import echo

raw = []
real = _agent_runtime_host.call


def spy(frame):
    answer = real(frame)
    raw.append(answer)
    return answer


_agent_runtime_host.call = spy

texts = ["", "caf\u00e9", "\u2028\u2029", "\U0001f600 \U0010ffff", "\ue000\uffee", "\x00\x1f\x7f",
         '"\\/', "<>&", "\u65e5\u672c", "\ufeff", "a\tb\nc\rd\be\ff"]
numbers = [0, -1, 2**53, 2**53 + 1, -(2**53) - 3, 10**20, 10**21, 10**25, 2**63 - 1, -(2**63)]
for t in texts:
    value = echo.say(text=t)
    print(raw[-1], value == {"echo": {"text": t}})
for n in numbers:
    value = echo.say(text="n", n=n)
    got = value["echo"]["n"]
    print(raw[-1], repr(got), type(got).__name__, list(value["echo"]))
