# A result set before an uncaught exception is still reported.
import agent_runtime

agent_runtime.set_result({"partial": True})
raise RuntimeError("after set_result")
