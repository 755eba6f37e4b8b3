# The guest's stdout and stderr parked in flight: their write ends sent
# with SCM_RIGHTS into an unaccepted connection to the guest's own
# listener, which is itself in flight in that connection's queue, so that
# only the kernel's Unix-socket garbage collector can free them (the
# fourth hostile-guest hunt). The run must still end at once, with its
# output whole.
import array
import socket


def send(s, fds):
    s.sendmsg([b"x"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])


report_host_uid()
listener = socket.socket(socket.AF_UNIX)
listener.bind("\0apysup-inflight")
listener.listen(1)
client = socket.socket(socket.AF_UNIX)
client.connect("\0apysup-inflight")
print("before", flush=True)
control("parked", send, client, [1, 2, listener.fileno(), client.fileno()])
for i in range(2000):
    print("after", i, "x" * 60)
