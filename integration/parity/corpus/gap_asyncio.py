# What asyncio still lacks under WASI: subprocesses need a process. The
# executor's tasks (run_in_executor, to_thread) run at once in the loop's
# thread under WASI (futures-thread-wasi.patch) and agree here.
import asyncio
import sys


def blocking(x):
    return x * 2


async def main():
    loop = asyncio.get_running_loop()
    try:
        print("run_in_executor:", await loop.run_in_executor(None, blocking, 21))
    except RuntimeError as e:
        print("run_in_executor failed:", type(e).__name__, e)
    try:
        print("to_thread:", await asyncio.to_thread(blocking, 4))
    except RuntimeError as e:
        print("to_thread failed:", type(e).__name__, e)
    try:
        proc = await asyncio.create_subprocess_exec(sys.executable, "-c", "print('child')",
                                                    stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        print("subprocess:", proc.returncode, out)
    except OSError as e:
        print("subprocess failed:", type(e).__name__, e)
    return "done"


print("asyncio.run:", asyncio.run(main()))
