# SIGKILL. argv: MODE TOKEN (the token lets the host find the guest's
# processes). The script is not pid 1 of its pid namespace: the guest init
# is (it reaps orphans, forwards signals and reports a script killed by
# a signal), and the script is its child, an ordinary process.
#
# Every mode: a child of the script SIGKILLs itself and dies; the script
# SIGKILLs pid 1, which the kernel drops (a namespace's init gets no signal
# sent from inside it that it does not handle, SIGKILL included), so the
# run goes on. Then:
#   self         the script SIGKILLs itself: the run ends killed by SIGKILL;
#   host-init    the host SIGKILLs the guest init (pid 1), which ends them all;
#   host-script  the host SIGKILLs the script; pid 1 reports it.
# Before the end, a child that must die with the run sleeps; its name
# tells the host that everything above was printed.
import signal
import time

mode = sys.argv[1]
report_host_uid()
child = os.fork()
if child == 0:
    os.kill(os.getpid(), signal.SIGKILL)
    os._exit(0)  # not reached
_, status = os.waitpid(child, 0)
info("child_self_sigkill", os.WIFSIGNALED(status) and os.WTERMSIG(status))

info("script_is_pid1", os.getpid() == 1)
try:
    os.kill(1, signal.SIGKILL)  # dropped by the kernel: had it not been, the
    time.sleep(0.2)             # whole namespace, this process too, would be gone
    info("pid1_survived_sigkill", True)
except OSError as exc:
    info("pid1_survived_sigkill", _reason(exc))

r, w = os.pipe()
if os.fork() == 0:  # a child that must die with the run
    os.close(r)
    libc.prctl(15, b"escape-ready", 0, 0, 0)  # PR_SET_NAME
    os.write(w, b"x")
    time.sleep(600)
    os._exit(0)
os.close(w)
os.read(r, 1)
if mode == "self":
    os.kill(os.getpid(), signal.SIGKILL)
    emit("FAILED", "self-sigkill", "survived")  # not reached
time.sleep(600)
