# The guest's outcome file as a symlink, left in place by an exit that
# skips the runner: to a forged outcome in the workspace, which the host
# must not take for the runner's (it reads outcome.json without following
# a link, on both backends: sandbox.ReadGuestFile), and the same run again
# with the link to a file of the read-only root. No result either way.
import json
import os
import sys

with open("/workspace/forged.json", "w") as f:
    json.dump({"ok": True, "result": "forged"}, f)
target = "/workspace/forged.json" if sys.argv[1:] == ["workspace"] else "/etc/passwd"
try:
    os.unlink("/run/apysup/out/outcome.json")
except FileNotFoundError:
    pass
os.symlink(target, "/run/apysup/out/outcome.json")
print("linked", os.readlink("/run/apysup/out/outcome.json"), os.path.exists("/run/apysup/out/outcome.json"))
sys.stdout.flush()
os._exit(0)
