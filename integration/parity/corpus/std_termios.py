# The termios and tty modules, as the guest's streams and files are never
# terminals: every call fails with the native guest's errno.
import getpass
import hashlib
import os
import termios
import tty


def show(label, fn):
    try:
        r = fn()
    except Exception as e:
        print(label, "!", type(e).__name__, e.args)
    else:
        print(label, "=", r)


attrs = [0, 0, 0, 0, termios.B9600, termios.B9600, [b"\0"] * termios.NCCS]
fd = os.open("/tmp/termios-probe", os.O_RDWR | os.O_CREAT, 0o600)
for label, d in [("stdin", 0), ("stdout", 1), ("file", fd), ("closed", 99)]:
    show(f"tcgetattr {label}", lambda: termios.tcgetattr(d))
    show(f"tcsetattr {label}", lambda: termios.tcsetattr(d, termios.TCSANOW, attrs))
    show(f"tcsetattr {label} bad when", lambda: termios.tcsetattr(d, 99, attrs))
    show(f"tcsendbreak {label}", lambda: termios.tcsendbreak(d, 0))
    show(f"tcdrain {label}", lambda: termios.tcdrain(d))
    show(f"tcflush {label}", lambda: termios.tcflush(d, termios.TCIFLUSH))
    show(f"tcflow {label}", lambda: termios.tcflow(d, termios.TCOON))
    show(f"tcgetwinsize {label}", lambda: termios.tcgetwinsize(d))
    show(f"tcsetwinsize {label}", lambda: termios.tcsetwinsize(d, (24, 80)))
    show(f"tty.setraw {label}", lambda: tty.setraw(d))
    show(f"tty.setcbreak {label}", lambda: tty.setcbreak(d))
    show(f"isatty {label}", lambda: os.isatty(d))
    show(f"get_terminal_size {label}", lambda: os.get_terminal_size(d))
    show(f"os.ttyname {label}", lambda: os.ttyname(d))
    show(f"os.tcgetpgrp {label}", lambda: os.tcgetpgrp(d))
    show(f"os.tcsetpgrp {label}", lambda: os.tcsetpgrp(d, os.getpgrp()))
    show(f"os.login_tty {label}", lambda: os.login_tty(d))
os.close(fd)
show("os.ctermid", os.ctermid)
show("os.openpty", os.openpty)
show("tcsetattr short list", lambda: termios.tcsetattr(0, termios.TCSANOW, [0]))
show("tcsetattr not a list", lambda: termios.tcsetattr(0, termios.TCSANOW, None))
show("tcsetwinsize bad", lambda: termios.tcsetwinsize(0, (1,)))
show("tcgetattr not an int", lambda: termios.tcgetattr("x"))


class FD:
    def fileno(self):
        return 1


show("tcgetattr fileno()", lambda: termios.tcgetattr(FD()))
names = {k: getattr(termios, k) for k in dir(termios) if k.isupper()}
print("names", len(names), hashlib.sha256(repr(sorted(names.items())).encode()).hexdigest()[:16])
for k in ["B0", "B9600", "B38400", "B115200", "B4000000", "TCSANOW", "TCSAFLUSH", "VMIN", "VTIME", "ECHO",
          "ICANON", "TCGETS", "TIOCGWINSZ", "FIONREAD", "FIONBIO", "NCCS", "CSIZE", "CS8", "IXON"]:
    print(k, names.get(k))
print("error", termios.error.__mro__, termios.error.__module__)
print("getpass", getpass.getpass.__name__)
