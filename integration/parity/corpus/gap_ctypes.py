try:
    import ctypes

    print("ctypes:", ctypes.sizeof(ctypes.c_void_p))
except ImportError as e:
    print("ctypes failed:", type(e).__name__, e)
