# A directory entry's inode number (os.DirEntry.inode(), d_ino) is the one
# lstat gives its path, on every mount. Under wazero the trees with no
# inode numbers of their own (the stdlib zip, the generated /etc, the job)
# answered 0 for every entry, where stat answers a number of its own
# (internal/sandbox/wazero/nativeview.go, viewedFile.Readdir). Mount
# points are left out: a mount's root is another inode than the directory
# it covers, natively too.
import os

open("f.txt", "w").close()
os.mkdir("d")
os.symlink("f.txt", "l")
for top in (".", "/etc", "/usr/lib/python3.11", "/usr/lib/python3.11/json",
            "/usr/share/zoneinfo", "/run/apysup/job", "/opt/apysup", "/tmp", "/dev"):
    agree = zero = 0
    for e in os.scandir(top):
        if os.path.ismount(e.path):
            continue
        ino = e.inode()
        zero += ino == 0
        agree += ino == os.stat(e.path, follow_symlinks=False).st_ino
    print(top, "zero", zero, "all agree", agree == len([e for e in os.scandir(top) if not os.path.ismount(e.path)]))
# The types of /dev's entries (d_type): the links to the standard
# streams are links, and each device a regular file, as natively, where a
# device is bound over a regular file the sandbox made. Under wazero the
# links were files and the devices character devices.
for e in sorted(os.scandir("/dev"), key=lambda e: e.name):
    if e.name in ("stdin", "stdout", "stderr", "null", "zero", "full", "random", "urandom"):
        print(e.name, e.is_symlink(), e.is_file(follow_symlinks=False), e.is_dir(follow_symlinks=False))
os.remove("l")
os.remove("f.txt")
os.rmdir("d")
