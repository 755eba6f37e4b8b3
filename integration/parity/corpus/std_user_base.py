# The user's base directory and site-packages, and sysconfig's posix_user
# scheme, from HOME (the workspace). Under wazero CPython's site and
# sysconfig answered None for WASI, which has no home directories in
# general, and the posix_user scheme was missing (KeyError)
# (python/wasi/patches/python3.11/wasi-user-base.patch).
import site
import sysconfig

print(site.getuserbase(), site.getusersitepackages())
print("posix_user" in sysconfig.get_scheme_names())
print(sysconfig.get_path("purelib", "posix_user"), sysconfig.get_path("scripts", "posix_user"))
print(sorted(sysconfig.get_paths("posix_user")))
print(site.ENABLE_USER_SITE)
