try:
    import socket
except ImportError as e:
    print("import socket failed:", e)
else:
    for label, make in [
        ("inet", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM)),
        ("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)),
        ("socketpair", socket.socketpair),
    ]:
        try:
            s = make()
            print(label, "created")
        except Exception as e:
            print(label, "failed:", type(e).__name__, e)
    try:
        socket.create_connection(("127.0.0.1", 9), timeout=1)
        print("connect: connected")
    except Exception as e:
        print("connect failed:", type(e).__name__)
