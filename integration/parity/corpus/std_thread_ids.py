# A thread's identity, as both backends answer it. Natively
# threading.get_ident() is glibc's pthread_self(), the address of the
# thread's descriptor (positive, different at each run), and
# threading.get_native_id() the kernel's thread id, which for the main
# thread is the pid (10). Under wazero get_ident() was 0 and get_native_id,
# and a Thread's native_id, did not exist (python/wasi/patches/python3.11/
# wasi-thread-ids.patch).
import logging
import os
import sys
import threading
import _thread

ident = threading.get_ident()
main = threading.main_thread()
print("ident positive", ident > 0, "the same everywhere", ident == _thread.get_ident() == main.ident == threading.current_thread().ident)
print("native id", threading.get_native_id(), _thread.get_native_id(), main.native_id, "pid", os.getpid())
print("repr", repr(main).replace(str(ident), "IDENT"))
logging.basicConfig(stream=sys.stdout, format="%(threadName)s %(thread)d %(process)d %(message)s")
record = logging.LogRecord("x", logging.INFO, __file__, 1, "m", None, None)
print("logging", record.threadName, record.thread == ident, record.process)
print("current frames", list(sys._current_frames()) == [ident])
