# asyncio as agents write it, identical on both backends: under WASI the event
# loop has no self-pipe (no socketpair) and waits in poll_oneoff
# (python/wasi/patches/python3.11/asyncio-no-self-pipe.patch).
import asyncio
import signal
import time

log = []


async def sleeper(name, delay):
    await asyncio.sleep(delay)
    log.append(name)
    return name.upper()


async def gather_and_order():
    results = await asyncio.gather(sleeper("a", 0.06), sleeper("b", 0.02), sleeper("c", 0.04))
    print("gather results:", results)
    print("finished in order:", log)


async def really_sleeps():
    start, cpu = time.monotonic(), time.process_time()
    await asyncio.sleep(0.2)
    print("sleep(0.2) slept at least 0.19 s:", time.monotonic() - start >= 0.19,
          "on under 0.1 s of CPU:", time.process_time() - cpu < 0.1)


async def wait_for_times_out():
    inner = []

    async def slow():
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            inner.append("cancelled")
            raise

    start = time.monotonic()
    try:
        await asyncio.wait_for(slow(), timeout=0.05)
    except asyncio.TimeoutError as e:
        print("wait_for:", type(e).__name__, "inner", inner,
              "after at least 0.04 s:", time.monotonic() - start >= 0.04)
    print("wait_for in time:", await asyncio.wait_for(sleeper("quick", 0), timeout=5))


async def timeout_context():
    try:
        async with asyncio.timeout(0.03) as cm:
            await asyncio.sleep(10)
    except TimeoutError:
        print("asyncio.timeout expired:", cm.expired())
    async with asyncio.timeout(None) as cm:
        await asyncio.sleep(0)
    print("asyncio.timeout(None) expired:", cm.expired())


async def producer_consumer():
    queue = asyncio.Queue(maxsize=2)
    seen = []

    async def producer():
        for i in range(6):
            await queue.put(i)
            seen.append(("put", i, queue.qsize()))
        await queue.put(None)

    async def consumer():
        total = 0
        while (item := await queue.get()) is not None:
            total += item
            seen.append(("got", item))
            queue.task_done()
        queue.task_done()
        return total

    _, total = await asyncio.gather(producer(), consumer())
    await queue.join()
    print("queue total:", total, "max size seen:", max(s[2] for s in seen if s[0] == "put"))
    print("queue events:", len(seen), seen[:4])


async def cancellation():
    steps = []

    async def worker():
        try:
            steps.append("started")
            await asyncio.sleep(10)
        finally:
            steps.append("cleaned up")

    task = asyncio.create_task(worker())
    await asyncio.sleep(0)
    task.cancel("stop now")
    try:
        await task
    except asyncio.CancelledError as e:
        print("cancelled:", e.args, task.cancelled(), steps)


async def exceptions():
    async def boom():
        await asyncio.sleep(0)
        raise ValueError("from a task")

    task = asyncio.create_task(boom())
    try:
        await task
    except ValueError as e:
        print("task raised:", repr(e), "done", task.done())
    print("gather return_exceptions:",
          await asyncio.gather(sleeper("ok", 0), boom(), return_exceptions=True))
    try:
        async with asyncio.TaskGroup() as tg:
            tg.create_task(boom())
            tg.create_task(asyncio.sleep(10))
    except* ValueError as eg:
        print("TaskGroup:", type(eg).__name__, [str(e) for e in eg.exceptions])


async def primitives():
    lock = asyncio.Lock()
    sem = asyncio.Semaphore(2)
    event = asyncio.Event()
    order = []
    active = 0
    peak = 0

    async def limited(i):
        nonlocal active, peak
        async with sem:
            active += 1
            peak = max(peak, active)
            await asyncio.sleep(0.01)
            active -= 1
        async with lock:
            order.append(i)

    async def waiter():
        await event.wait()
        order.append("event")

    w = asyncio.create_task(waiter())
    await asyncio.gather(*(limited(i) for i in range(5)))
    event.set()
    await w
    print("semaphore peak:", peak, "order:", order)

    async def agen(n):
        for i in range(n):
            await asyncio.sleep(0)
            yield i * i

    print("async generator:", [x async for x in agen(5)])
    done = [await f for f in asyncio.as_completed([sleeper("x", 0.03), sleeper("y", 0.01)])]
    print("as_completed:", done)
    finished, pending = await asyncio.wait(
        [asyncio.create_task(sleeper("w1", 0.01)), asyncio.create_task(sleeper("w2", 5))],
        return_when=asyncio.FIRST_COMPLETED)
    print("wait FIRST_COMPLETED:", len(finished), len(pending))
    for p in pending:
        p.cancel()


async def loop_callbacks():
    loop = asyncio.get_running_loop()
    calls = []
    fut = loop.create_future()
    loop.call_later(0.02, calls.append, "later")
    loop.call_soon(calls.append, "soon")
    loop.call_soon_threadsafe(calls.append, "threadsafe")
    loop.call_later(0.03, fut.set_result, "future set")
    print(await fut, calls)
    handled = loop.create_future()
    loop.add_signal_handler(signal.SIGUSR1, handled.set_result, "signal handled")
    signal.raise_signal(signal.SIGUSR1)
    print(await asyncio.wait_for(handled, 5), loop.remove_signal_handler(signal.SIGUSR1))
    try:
        loop.add_signal_handler(signal.SIGKILL, calls.append, "kill")
    except RuntimeError as e:
        print("SIGKILL:", e)


async def main():
    await gather_and_order()
    await really_sleeps()
    await wait_for_times_out()
    await timeout_context()
    await producer_consumer()
    await cancellation()
    await exceptions()
    await primitives()
    await loop_callbacks()
    return "main done"


print("asyncio.run:", asyncio.run(main()))
with asyncio.Runner() as runner:
    print("Runner:", runner.run(sleeper("runner", 0)))
loop = asyncio.new_event_loop()
print("run_until_complete:", loop.run_until_complete(sleeper("loop", 0.01)))
loop.close()
print("closed:", loop.is_closed())
