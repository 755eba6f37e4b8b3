# Who and where the guest is: the same names on both backends (natively
# the container's host name and the generated /etc/passwd's user; under
# WASI, which has neither, the build answers with the same names).
import getpass
import os
import platform
import socket

print("getuser", getpass.getuser())
print("node", platform.node())
print("uname nodename", os.uname().nodename)
print("gethostname", socket.gethostname())
print("HOME", os.environ.get("HOME"), os.path.expanduser("~"))
