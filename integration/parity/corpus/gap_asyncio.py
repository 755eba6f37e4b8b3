import asyncio


async def main():
    await asyncio.sleep(0)
    return "done"


try:
    print("asyncio.run:", asyncio.run(main()))
except Exception as e:
    print("asyncio.run failed:", type(e).__name__, e)


def drive(coro):
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value


async def pure():
    return 42


print("a coroutine driven by hand:", drive(pure()))
