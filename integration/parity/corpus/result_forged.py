import agent_runtime

agent_runtime.set_result({"answer": 42, "receipts": []})
print("set a result with a host field")
