# Not here: _gdbm and _tkinter, which natively depend on optional Debian
# packages (python3-gdbm, python3-tk) of the host.
for name in ("fcntl", "pwd", "grp", "resource", "mmap", "termios", "_posixsubprocess", "select", "_bz2", "_lzma", "readline", "_curses", "_uuid", "_dbm", "pyexpat", "_decimal", "_multiprocessing", "_posixshmem", "syslog", "spwd", "_crypt"):
    try:
        __import__(name)
        print(name, "ok")
    except ImportError as e:
        print(name, "failed")
