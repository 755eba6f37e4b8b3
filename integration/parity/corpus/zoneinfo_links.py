# Symlinks in the host's /usr/share/zoneinfo, which both backends show
# read-only: those that stay inside are followed; localtime, which leads to
# the host's /etc, dangles on both (the native guest's /etc has no
# localtime; wazero resolves every path beneath the directory).
import os

Z = "/usr/share/zoneinfo/"


def probe(f):
    try:
        return f()
    except OSError as e:
        return type(e).__name__


for name in ["localtime", "right/Pacific/Yap", "right/Canada/Pacific", "UTC"]:
    path = Z + name
    print(name, "link" if os.path.islink(path) else "no link", "reads", probe(lambda: len(open(path, "rb").read()) > 0))
print("localtime ->", probe(lambda: os.readlink(Z + "localtime")))
print("Yap is Port_Moresby:", open(Z + "right/Pacific/Yap", "rb").read() == open(Z + "right/Pacific/Port_Moresby", "rb").read())
