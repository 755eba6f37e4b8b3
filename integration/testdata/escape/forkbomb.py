# A fork bomb under the pids limit: every process forks for ever; the
# script stops at the first EAGAIN, lets the bomb pound for a second, and
# exits; the guest init (pid 1, the namespace's init) then exits with its
# status, which ends the whole pid namespace.
import time

report_host_uid()
made = 0
while True:
    try:
        pid = os.fork()
    except OSError as exc:
        emit("BLOCKED", "fork:pids", errno.errorcode.get(exc.errno, "?"))
        break
    if pid == 0:
        while True:  # the bomb: never print, never return
            try:
                os.fork()
            except OSError:
                time.sleep(0.005)
    made += 1
info("forked", made)
time.sleep(1)
