import hashlib
import json
import os

import echo

os.makedirs("reports/2024", exist_ok=True)
reply = echo.say(text="write me")
with open("reports/2024/reply.json", "w") as f:
    json.dump(reply, f, sort_keys=True)
with open("reports/big.bin", "wb") as f:
    for i in range(64):
        f.write(hashlib.sha256(str(i).encode()).digest() * 64)
n = int(open("input.txt").read().split()[1])
with open("answer.txt", "w") as f:
    f.write(str(n * 2))
os.remove("data.csv")
os.replace("answer.txt", "final.txt")
open("empty", "w").close()
print(sorted(os.listdir(".")), os.path.getsize("reports/big.bin"))
