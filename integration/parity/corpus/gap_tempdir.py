import os
import tempfile

print("gettempdir:", tempfile.gettempdir())
try:
    with open("/tmp/probe", "w") as f:
        f.write("x")
    print("/tmp writable")
except OSError as e:
    print("/tmp failed:", type(e).__name__)
with tempfile.TemporaryFile(dir=".") as f:
    f.write(b"in the workspace")
    f.seek(0)
    print("TemporaryFile in the workspace:", f.read())
print(sorted(os.listdir(".")))
