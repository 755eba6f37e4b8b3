# The interpreter's version and build, as a script prints them first: the
# same Debian revision of the same source on both backends, and sys.version
# names the native build (python/wasi/build.sh).
import platform
import sys

print(sys.version)
print(sys.version_info, hex(sys.hexversion), sys.api_version)
print(platform.python_version(), platform.python_version_tuple())
print(platform.python_build(), platform.python_compiler())
print(platform.python_implementation(), platform.python_branch(), platform.python_revision())
print(sys.implementation.name, sys.implementation.version, sys.implementation.cache_tag)
print(sys.copyright.splitlines()[0])
