# Under WASI a ThreadPoolExecutor runs each task when it is submitted
# (std_futures.py): a task that waits on something a later task provides
# waits alone. Natively the two tasks overlap and the wait sees the set.
import concurrent.futures as cf
import threading

ev = threading.Event()
with cf.ThreadPoolExecutor(2) as ex:
    waiter = ex.submit(ev.wait, 0.5)
    setter = ex.submit(ev.set)
    print("the wait saw the set:", waiter.result(), "setter:", setter.result())
