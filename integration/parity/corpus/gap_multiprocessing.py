# multiprocessing natively: pools of each start method, a queue, a shared
# value, POSIX shared memory and a process pool executor (semaphores and
# shared memory live in /dev/shm). Under wazero there are no processes.
if __name__ == "__main__":
    try:
        import multiprocessing

        print("cpu_count:", multiprocessing.cpu_count() > 0)
        for method in ("fork", "spawn", "forkserver"):
            with multiprocessing.get_context(method).Pool(2) as pool:
                print("pool", method, pool.map(abs, [-1, -2]))
        q = multiprocessing.Queue()
        q.put({"a": 1})
        print("queue:", q.get(timeout=30))
        v = multiprocessing.Value("i", 5)
        with v.get_lock():
            v.value += 1
        print("value:", v.value)
        from multiprocessing import shared_memory

        shm = shared_memory.SharedMemory(create=True, size=16)
        shm.buf[:3] = b"abc"
        other = shared_memory.SharedMemory(shm.name)
        print("shared_memory:", bytes(other.buf[:3]))
        other.close()
        shm.close()
        shm.unlink()
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(2) as ex:
            print("executor:", list(ex.map(abs, [-4, -5])))
    except Exception as e:
        print("multiprocessing failed:", type(e).__name__, e)
