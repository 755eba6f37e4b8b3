# Run with a 256 MiB memory limit: touch 400 MiB, a page at a time.
import echo

print(echo.say(text="before the allocation"), flush=True)
chunks = []
for i in range(400):
    chunk = bytearray(1 << 20)
    chunk[::4096] = b"x" * 256
    chunks.append(chunk)
print("allocated", len(chunks))
