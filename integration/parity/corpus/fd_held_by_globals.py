# The script ends holding every descriptor it may have in its globals (a
# function makes them a reference cycle): the runner releases them as
# `python script.py` ends, then writes the outcome, so the run is ok on
# both backends (fd_exhausted_outcome.py holds them where nothing does).
import errno

held = []


def keep():
    return held


try:
    while True:
        held.append(open("/usr/share/zoneinfo/UTC", "rb"))
except OSError as e:
    print("stopped:", type(e).__name__, errno.errorcode.get(e.errno, e.errno), len(held) > 200)
