# SIGKILL: a process of the guest kills itself; pid 1 tries to; then the
# guest waits to be killed from the host. argv: TOKEN (for the host to find
# this process).
import signal
import time

report_host_uid()
child = os.fork()
if child == 0:
    os.kill(os.getpid(), signal.SIGKILL)
    os._exit(0)  # not reached
_, status = os.waitpid(child, 0)
info("child_self_sigkill", os.WIFSIGNALED(status) and os.WTERMSIG(status))

# The script is pid 1 of its pid namespace: the kernel drops signals sent
# to it from inside the namespace unless it handles them, SIGKILL included.
os.kill(os.getpid(), signal.SIGKILL)
time.sleep(0.2)
info("pid1_survived_self_sigkill", True)

if os.fork() == 0:  # a child that must die with the run
    # Its name tells the host that everything above was printed.
    libc.prctl(15, b"escape-ready", 0, 0, 0)  # PR_SET_NAME
    time.sleep(600)
    os._exit(0)
time.sleep(600)
