# Writes outside /workspace: a read-only root natively, nothing mounted
# under WASI.
for path in ("/etc/parity-nope", "/usr/lib/parity-nope", "/opt/apysup/parity-nope", "/run/apysup/job/parity-nope", "/parity-nope"):
    try:
        open(path, "w")
        print(path, "written")
    except OSError as e:
        print(path, type(e).__name__, e.errno)
