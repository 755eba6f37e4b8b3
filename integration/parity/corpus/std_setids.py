# Changing ids as both backends answer it: natively the set*id calls,
# setgroups and initgroups are outside the sandbox's seccomp allowlist
# and fail with EPERM (glibc's seteuid and setegid refuse -1 with EINVAL
# first), once posixmodule has parsed their arguments: the uid_t and
# gid_t converters' errors, with their x86-64 quirks (2**32 - 1 is -1,
# 2**32 is "less than minimum"). getgrouplist reads the generated
# /etc/group. Under wazero none of them existed; wasi-os-ids.patch makes
# them with the same rules, and posix has them too (wasi-os-sched.patch).
import os
import posix


def t(name, *a):
    try:
        r = getattr(os, name)(*a)
        return (name, a, "ok", r)
    except Exception as e:
        return (name, a, type(e).__name__, str(e))


NAMES = ("setuid", "seteuid", "setreuid", "setresuid", "setgid", "setegid", "setregid",
         "setresgid", "setgroups", "initgroups", "getgrouplist")
print(all(getattr(posix, n) is getattr(os, n) for n in NAMES), all(n in os.__all__ for n in NAMES))
for name in NAMES:
    f = getattr(os, name)
    print(name, f.__module__, f.__qualname__, f.__text_signature__, repr(f.__doc__))
VALUES = [0, 1000, -1, -2, 2**31, 2**32 - 2, 2**32 - 1, 2**32, 2**63 - 1, 2**63, 2**64 - 1, 2**64,
          -2**63, -2**63 - 1, 1.5, "1", None, True]
for v in VALUES:
    for name in ("setuid", "setgid", "seteuid", "setegid"):
        print(t(name, v))
    print(t("setreuid", v, 0), t("setreuid", 0, v), t("setregid", v, -1))
    print(t("setresuid", -1, -1, v), t("setresgid", v, -1, -1))
    print(t("initgroups", "sandbox", v), t("getgrouplist", "sandbox", v))
for groups in ([], [1000], (1000, 0), [1.5], ["1"], [2**32], [-1], [-2], 5, "ab", b"ab", range(3),
               [True], {1}, {1: 2}):
    print(t("setgroups", groups))
print("too many", t("setgroups", list(range(65537)))[2:])
for user in ("sandbox", "root", "nobody", "nosuchuser", b"sandbox", 5, None, "a\0b", "\udcff"):
    print(t("initgroups", user, 1000), t("getgrouplist", user, 1000), t("getgrouplist", user, 0))
for name, args, kwargs in (("setuid", (), {}), ("setuid", (1, 2), {}), ("setuid", (), {"uid": 1}),
                           ("setreuid", (1,), {}), ("setreuid", (1, 2, 3), {}),
                           ("setresgid", (1,), {}), ("setgroups", (), {}),
                           ("setgroups", (), {"groups": []}), ("initgroups", ("x",), {}),
                           ("initgroups", (), {"username": "x", "gid": 1}),
                           ("getgrouplist", ("x",), {})):
    try:
        getattr(os, name)(*args, **kwargs)
    except TypeError as e:
        print(name, e)
