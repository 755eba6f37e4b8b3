# Writes outside /workspace: a read-only root on both backends (EROFS; WASI
# numbers it 69), but under WASI there is no /etc (ENOENT).
for path in ("/etc/parity-nope", "/usr/lib/parity-nope", "/opt/apysup/parity-nope", "/run/apysup/job/parity-nope", "/parity-nope"):
    try:
        open(path, "w")
        print(path, "written")
    except OSError as e:
        print(path, type(e).__name__, e.errno)
