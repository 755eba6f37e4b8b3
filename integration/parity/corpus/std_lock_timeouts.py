# Waits with a timeout that nothing can end early (one thread): each ends
# at its deadline with its timeout's answer. Under wazero the WASI build
# has no threads, and a timed wait on a held lock returned at once, so
# callers spun until their deadline, and queue.SimpleQueue.get, which
# takes such a return for the lock, could wait for ever once its deadline
# had passed (python/wasi/patches/python3.11/wasi-lock-timeouts.patch).
import queue
import threading
import time


def timed(label, call, timeout):
    began = time.monotonic()
    try:
        answer = call()
    except queue.Empty:
        answer = "Empty"
    waited = time.monotonic() - began
    print(label, answer, "waited its timeout:", waited >= timeout * 0.9)


for _ in range(50):
    try:
        queue.SimpleQueue().get(timeout=0.002)
    except queue.Empty:
        pass
print("50 SimpleQueue.get timeouts: Empty")

timed("SimpleQueue.get", lambda: queue.SimpleQueue().get(timeout=0.05), 0.05)
timed("Queue.get", lambda: queue.Queue().get(timeout=0.05), 0.05)
lock = threading.Lock()
lock.acquire()
timed("Lock.acquire", lambda: lock.acquire(timeout=0.05), 0.05)
rlock = threading.RLock()
timed("RLock.acquire", lambda: rlock.acquire(timeout=0.05), 0.05)
timed("Event.wait", lambda: threading.Event().wait(0.05), 0.05)
cond = threading.Condition()
with cond:
    timed("Condition.wait", lambda: cond.wait(0.05), 0.05)
sem = threading.Semaphore(0)
timed("Semaphore.acquire", lambda: sem.acquire(timeout=0.05), 0.05)
q = queue.SimpleQueue()
q.put(1)
print("a full SimpleQueue answers at once:", q.get(timeout=5))
