# The approver approves notes.put unless its arguments say "reject", and
# rejects files.remove always. The script continues in the same frame.
import agent_runtime
import files
import notes

print(notes.put(text="buy milk"))
try:
    notes.put(text="please reject this one")
except agent_runtime.CapabilityError as e:
    print("rejected:", e.error_code, e.message)
try:
    files.remove(path="/workspace/input.txt")
except agent_runtime.CapabilityError as e:
    print("rejected:", e.error_code)
print(notes.put(text="after the refusals"))
agent_runtime.set_result({"approved": 2, "rejected": 2})
