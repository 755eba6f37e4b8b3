import agent_runtime

agent_runtime.set_result("overwritten")
agent_runtime.set_result({
    "unicode": "caf\u00e9 \U0001F600 \u65e5\u672c",
    "numbers": [0, -1, 1.5, 1e21, 1e-7, 2**53, 0.1 + 0.2, -0.0],
    "nested": {"b": [True, False, None], "a": {"z": [], "y": {}}},
    "tuple": (1, 2),
    "escape": "quote \" backslash \\ newline \n tab \t nul \u0000",
})
try:
    agent_runtime.set_result({1: "int key"})
except agent_runtime.AgentRuntimeError as e:
    print(e.error_code)
try:
    agent_runtime.set_result(float("inf"))
except agent_runtime.AgentRuntimeError as e:
    print(e.error_code)
try:
    agent_runtime.set_result("x" * (1 << 20))
except agent_runtime.AgentRuntimeError as e:
    print(e.error_code)
