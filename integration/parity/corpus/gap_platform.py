import os
import sys

print("sys.platform", sys.platform)
print("os.name", os.name)
print("uname", hasattr(os, "uname") and os.uname().sysname)
print("getpid", os.getpid() > 0, "getuid", hasattr(os, "getuid") and os.getuid())

import platform
import sysconfig

print("platform", platform.system(), platform.machine(), platform.architecture(), platform.libc_ver())
print("sysconfig", sysconfig.get_platform())
