"""A first guest: prints, calls one capability through the prelude, sets a result."""
import sys

import agent_runtime
import weather

print("hello from", sys.implementation.name, sys.version.split()[0])
answer = weather.get(city="Paris")
print("weather.get answered:", answer)
agent_runtime.set_result({"city": "Paris", "answer": answer})
