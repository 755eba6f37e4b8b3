# Leave traps in the workspace and the outcome directory for the host,
# which snapshots, exports and removes them after the run as root.
# argv: MODE SECRET_PATH. MODE links: symlinks to the host's secret (absolute
# and relative), a FIFO, and outcome.json as a symlink to the secret;
# MODE setuid: a set-user-ID and set-group-ID file and a plain one, to be
# exported; MODE deep: a tree deeper than PATH_MAX; MODE names: names that
# are not UTF-8 (JSON would write each as U+FFFD, so these two would digest
# alike), in a directory and at the top.
import stat

mode, secret = sys.argv[1], sys.argv[2]
os.chdir("/workspace")
if mode == "links":
    control("symlink:absolute", os.symlink, secret, "abs")
    control("symlink:relative", os.symlink, "../" * 20 + secret.lstrip("/"), "rel")
    control("symlink:dir", os.symlink, "/", "root")
    control("fifo", os.mkfifo, "fifo")
    control("symlink:outcome", os.symlink, secret, "/run/apysup/out/outcome.json")
    # The runner replaces outcome.json at the end: make it exit first.
    sys.stdout.flush()
    os._exit(0)
elif mode == "setuid":
    with open("suid", "w") as f:
        f.write("#!/bin/sh\nid\n")
    os.chmod("suid", 0o6755)
    info("suid_mode", oct(stat.S_IMODE(os.stat("suid").st_mode)))
    with open("plain.txt", "w") as f:
        f.write("exported")
    control("setuid", lambda: None)
elif mode == "deep":
    for _ in range(3000):
        os.mkdir("d")
        os.chdir("d")
    with open("deep", "w") as f:
        f.write("x")
    control("deep", lambda: None)
elif mode == "names":
    os.mkdir("d")
    for name in (b"\xff", b"\xfe", b"d/\xff"):
        with open(name, "wb") as f:
            f.write(b"same")
    control("names", lambda: None)
