# Capability calls from several threads, the fan-out an agent writes with
# a ThreadPoolExecutor, then calls one after another. The host admits a
# programmatic id only as the parent's next; natively ids numbered by two
# threads reached it in either order, the later one was refused
# (program_sequence_violation) and never sent again, and every later call
# of the run was refused too. The runtime now makes one call at a time
# (agent_runtime._calls); under wazero there are no threads.
import collections
import concurrent.futures

import agent_runtime
import echo


def one(text):
    # The same arguments from every thread: which thread's call takes
    # which id is the scheduler's, and the receipts compare by id.
    try:
        return echo.say(text=text)["echo"]["text"]
    except agent_runtime.AgentRuntimeError as exc:
        return exc.error_code


with concurrent.futures.ThreadPoolExecutor(8) as pool:
    answers = list(pool.map(one, ["pool"] * 24))
print("pool", sorted(collections.Counter(answers).items()))

# Submitted one by one and taken as they complete (threading.Thread itself
# cannot start under WASI: gap_threads.py).
with concurrent.futures.ThreadPoolExecutor(4) as pool:
    done = [f.result() for f in concurrent.futures.as_completed([pool.submit(one, "submitted") for _ in range(20)])]
print("submitted", sorted(collections.Counter(done).items()))
print("after", [one("after %d" % i) for i in range(3)])
agent_runtime.set_result({"answers": len(answers)})
