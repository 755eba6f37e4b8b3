# Where wasm32's sizes show in the standard library's output, beyond
# sys.maxsize itself (world_sizes.py) and hash() (gap_hash.py):
# - email's MIME boundaries pad a random number to len(repr(sys.maxsize)):
#   19 digits natively, 10 under wazero, so a multipart message's
#   Content-Type header folds natively and fits on one line under wazero;
# - random.Random seeded with a float takes hash() of it, which is 32 bits
#   under wazero: another sequence (an int or a str seed agrees);
# - logging's SysLogHandler for a Unix socket path names socket.AF_UNIX,
#   which the WASI build has not (no Unix sockets: gap_sockets.py);
#   natively the handler ignores the failed connect, as C's openlog does;
# - struct.pack of an integer past a 4-byte (or smaller) format's range but
#   within 64 bits: natively the format's range error ("'i' format
#   requires -2147483648 <= number <= 2147483647"), under wazero "argument
#   out of range", which _struct gives an integer past a C long (32 bits
#   there); venv makes no lib64 link, which it makes for 64-bit builds.
import email.generator
import logging.handlers
import os
import random
import shutil
import struct
import venv

boundary = email.generator.Generator._make_boundary()
print("boundary digits", len(boundary.strip("=")))
print("seed 3.5", random.Random(3.5).random())
print("seed 35", random.Random(35).random(), "seed 'abc'", random.Random("abc").random())
try:
    handler = logging.handlers.SysLogHandler("/dev/log")
    print("SysLogHandler('/dev/log') made")
    handler.close()
except Exception as e:
    print("SysLogHandler('/dev/log')", type(e).__name__, e)
for fmt, value in [("<i", 2**31), ("<I", 2**32), ("<H", 2**33), ("<b", 2**40), ("<q", 2**70)]:
    try:
        struct.pack(fmt, value)
    except struct.error as e:
        print(fmt, value, "struct.error:", e)
venv.create("gap_venv", with_pip=False, symlinks=True)
print("venv:", sorted(os.listdir("gap_venv")))
shutil.rmtree("gap_venv")
