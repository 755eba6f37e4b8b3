try:
    import multiprocessing

    print("cpu_count:", multiprocessing.cpu_count() > 0)
    with multiprocessing.Pool(2) as pool:
        print("pool:", pool.map(abs, [-1, -2]))
except Exception as e:
    print("multiprocessing failed:", type(e).__name__, e)
