# Run with a 10 s timeout: an event loop with nothing left to wake it waits
# until the host ends the run, on both backends (under WASI poll() with no
# descriptor and no timeout fails, so the loop waits with its longest one).
import asyncio


async def main():
    print("waiting for a future nobody sets", flush=True)
    await asyncio.Future()


asyncio.run(main())
