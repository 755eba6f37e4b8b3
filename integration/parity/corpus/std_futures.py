# concurrent.futures' ThreadPoolExecutor gives the same results on both
# backends: natively on threads, under WASI (no threads) each task runs
# when it is submitted. Only results are printed, never from a task, so
# the native threads' interleaving cannot show.
import concurrent.futures as cf
import math

def square(x):
    return x * x

def fails(x):
    raise ValueError("bad %d" % x)

with cf.ThreadPoolExecutor(max_workers=4) as ex:
    print("map", list(ex.map(square, range(10))))
    futures = [ex.submit(math.factorial, n) for n in (5, 10, 20)]
    print("submit", [f.result() for f in futures])
    done = sorted(f.result() for f in cf.as_completed(futures))
    print("as_completed", done)
    f = ex.submit(fails, 3)
    print("exception", type(f.exception()).__name__, f.exception())
    try:
        list(ex.map(fails, [1]))
    except ValueError as e:
        print("map raised", e)
    waited = cf.wait([ex.submit(square, 7)], return_when=cf.ALL_COMPLETED)
    print("wait", [d.result() for d in waited.done], len(waited.not_done))
    # A task that submits another to the same pool.
    outer = ex.submit(lambda: ex.submit(square, 12).result() + 1)
    print("nested", outer.result())

seen = []
with cf.ThreadPoolExecutor(max_workers=1, initializer=seen.append, initargs=("init",)) as ex:
    print("initializer", ex.submit(len, seen).result() >= 1, seen[:1])

def broken_init():
    raise RuntimeError("no")

ex = cf.ThreadPoolExecutor(max_workers=1, initializer=broken_init)
f = ex.submit(square, 2)
print("broken initializer", type(f.exception()).__name__)
try:
    ex.submit(square, 3)
    print("submit after a broken initializer: accepted")
except cf.BrokenExecutor as e:
    print("submit after a broken initializer:", type(e).__name__)
ex.shutdown()
try:
    ex.submit(square, 4)
except RuntimeError as e:
    print("after shutdown:", e)

# as_completed yields futures in the order they finish: one worker
# finishes them in submission order, natively while as_completed waits,
# under WASI before it is called (each future records when it finished;
# before, those already finished came in a set's order).
import time

def nap(name):
    time.sleep(0.02)
    return name

with cf.ThreadPoolExecutor(max_workers=1) as ex:
    futs = {ex.submit(nap, name): name for name in "cadbe"}
    print("as_completed", [f.result() for f in cf.as_completed(futs)])
