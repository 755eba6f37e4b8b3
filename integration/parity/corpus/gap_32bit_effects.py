# Where wasm32's sizes show in the standard library's output, beyond
# sys.maxsize itself (world_sizes.py) and hash() (gap_hash.py):
# - email's MIME boundaries pad a random number to len(repr(sys.maxsize)):
#   19 digits natively, 10 under wazero, so a multipart message's
#   Content-Type header folds natively and fits on one line under wazero;
# - random.Random seeded with a float takes hash() of it, which is 32 bits
#   under wazero: another sequence (an int or a str seed agrees);
# - logging's SysLogHandler for a Unix socket path names socket.AF_UNIX,
#   which the WASI build has not (no Unix sockets: gap_sockets.py);
#   natively the handler ignores the failed connect, as C's openlog does.
import email.generator
import logging.handlers
import random

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
