# os.getrandom on both backends: the sizes asked for, its flags and
# getrandom(2)'s refusals. WASI preview 1 has random_get and no
# getrandom; the WASI build fills the buffer from random_get after the
# kernel's checks (python/wasi/_apysup_files.c).
import errno
import os

print("flags", os.GRND_NONBLOCK, os.GRND_RANDOM)
for size in (0, 1, 16, 1000, 100000):
    b = os.getrandom(size)
    print(size, len(b), type(b).__name__)
for flags in (0, os.GRND_NONBLOCK, os.GRND_RANDOM, os.GRND_RANDOM | os.GRND_NONBLOCK, 4, 5, 6, 8, 0x100, -1):
    try:
        print("flags", flags, len(os.getrandom(32, flags)))
    except OSError as e:
        print("flags", flags, errno.errorcode[e.errno])
try:
    os.getrandom(-1)
except OSError as e:
    print("negative", errno.errorcode[e.errno])
print("distinct", len({os.getrandom(16) for _ in range(200)}))
sample = os.getrandom(1 << 16)
print("every byte value", len(set(sample)) == 256)
