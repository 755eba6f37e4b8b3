# Walk the guest's whole file system looking for the secret the test
# planted in the host's /root and /tmp, and for any Unix socket it can reach.
# argv: SECRET_FILE_NAME SECRET_SHA256. The guest does not know the secret
# itself: it looks for the file name, for the content's digest, and for the
# canary prefix, which this script only ever spells in two pieces.
import hashlib
import socket
import stat
import time

name, digest = sys.argv[1], sys.argv[2]
canary = ("APYSUP-HOST-" + "SECRET-CANARY").encode()
SKIP = {"/proc", "/sys", "/dev"}  # kernel views, walked by other tests
# Every name is checked; contents are read up to MAX_FILE per file, all of
# them outside /usr (the host's public /usr, bound read-only on purpose) and
# up to USR_BYTES inside it, so that the walk stays quick.
MAX_ENTRIES, MAX_FILE, USR_BYTES, MAX_SECONDS = 400_000, 256 << 10, 64 << 20, 60
usr_bytes = 0
outside_usr = []

found, sockets, errors = [], [], 0
entries = files = read = nbytes = 0
tops = set()
deadline = time.monotonic() + MAX_SECONDS
truncated = False
for root, dirs, names in os.walk("/", onerror=lambda e: None):
    if root == "/":
        tops.update(dirs + names)
        dirs.sort(key=lambda d: d == "usr")  # /usr last
    dirs[:] = [d for d in dirs if os.path.join(root, d) not in SKIP]
    in_usr = root == "/usr" or root.startswith("/usr/")
    for n in names + dirs:
        entries += 1
        if name in n or canary in n.encode("utf-8", "surrogateescape"):
            found.append(("name", os.path.join(root, n)))
    for n in names:
        path = os.path.join(root, n)
        try:
            st = os.lstat(path)
        except OSError:
            errors += 1
            continue
        if stat.S_ISSOCK(st.st_mode):
            sockets.append(path)
        if not stat.S_ISREG(st.st_mode):
            continue
        files += 1
        if st.st_size > MAX_FILE or (in_usr and usr_bytes > USR_BYTES):
            continue
        try:
            with open(path, "rb") as f:
                data = f.read(MAX_FILE)
        except OSError:
            errors += 1
            continue
        read += 1
        nbytes += len(data)
        if in_usr:
            usr_bytes += len(data)
        else:
            outside_usr.append(path)
        if canary in data or hashlib.sha256(data).hexdigest() == digest:
            found.append(("content", path))
    if entries > MAX_ENTRIES or time.monotonic() > deadline:
        truncated = True
        break

info("walk", {"entries": entries, "files": files, "read": read, "bytes": nbytes, "truncated": truncated,
              "tops": sorted(tops), "read_outside_usr": sorted(outside_usr)})
info("found", found)

# Direct guesses at the planted files.
for path in ["/root/" + name, "/tmp/" + name, "/proc/1/root/root/" + name, "/proc/1/root/tmp/" + name,
             "/proc/self/cwd/../root/" + name, "/../../root/" + name, "/workspace/../root/" + name,
             "/proc/1/cwd/../../root/" + name]:
    attempt("open:" + path.replace(name, "SECRET"), lambda p: open(p, "rb").read(), path)

# The host's own secrets by their usual names: none of them is in the
# guest's generated /etc or its root.
for path in ["/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/sudoers", "/root", "/home", "/var", "/srv", "/mnt",
             "/boot", "/sys", "/run/secrets", "/var/run/docker.sock", "/run/containerd"]:
    attempt("stat:" + path, os.stat, path)


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.settimeout(2)
        s.connect(path)
        return "connected"
    finally:
        s.close()


reach = {}
for path in sorted(sockets):
    try:
        connect(path)
        reach[path] = "connected"
    except OSError as e:
        reach[path] = errno.errorcode.get(e.errno, str(e.errno))
info("sockets", reach)
