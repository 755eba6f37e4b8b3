import threading

print("_thread importable:", __import__("importlib.util").util.find_spec("_thread") is not None)
out = []
try:
    t = threading.Thread(target=out.append, args=(1,))
    t.start()
    t.join()
    print("thread ran:", out)
except Exception as e:
    print("thread failed:", type(e).__name__, e)
print("active:", threading.active_count())
