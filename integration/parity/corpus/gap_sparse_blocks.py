# A sparse file's blocks. The native guest's tmpfs allocates only the pages
# written; WASI carries no block count, and the WASI build reckons a file's
# blocks from its size (python/wasi/_apysup_stat.c), as if written whole.
import os

with open("holes", "wb") as f:
    f.seek(100000)
    f.write(b"x")
with open("truncated", "wb") as f:
    f.truncate(1 << 20)
for name in ("holes", "truncated"):
    st = os.stat(name)
    print(name, st.st_size, st.st_blocks)
