"""This module provides access to the Unix password database.
It is available on all Unix versions.

Password database entries are reported as 7-tuples containing the following
items from the password database (see `<pwd.h>'), in order:
pw_name, pw_passwd, pw_uid, pw_gid, pw_gecos, pw_dir, pw_shell.
The uid and gid items are integers, all others are strings. An
exception is raised if the entry asked for cannot be found."""

# apysup: WASI has no user database, and CPython's WASI build no pwd
# module. This one answers as the native guest's: the users of the native
# sandbox's generated /etc/passwd (internal/sandbox/etc.go, which the
# wazero guest sees too; TestUserDatabasesAsNative holds the two alike),
# with the C module's errors.

import _apysup_structseq as _s

_ENTRIES = (
    ("root", "x", 0, 0, "root", "/nonexistent", "/usr/sbin/nologin"),
    ("sandbox", "x", 1000, 1000, "sandbox", "/workspace", "/usr/sbin/nologin"),
    ("nobody", "x", 65534, 65534, "nobody", "/nonexistent", "/usr/sbin/nologin"),
)

struct_passwd = _s.structseq(
    "pwd",
    "struct_passwd",
    ("pw_name", "pw_passwd", "pw_uid", "pw_gid", "pw_gecos", "pw_dir", "pw_shell"),
    "pwd.struct_passwd: Results from getpw*() routines.\n\n"
    "This object may be accessed either as a tuple of\n"
    "  (pw_name,pw_passwd,pw_uid,pw_gid,pw_gecos,pw_dir,pw_shell)\n"
    "or via the object attributes as named in the above tuple.",
    ("user name", "password", "user id", "group id", "real name", "home directory", "shell program"),
)


def getpwuid(*args, **kwargs):
    """Return the password database entry for the given numeric user ID.

    See `help(pwd)` for more on password database entries."""
    uid = _s.to_id(_s.one_argument("pwd.getpwuid", args, kwargs), "uid")
    entry = _s.find(_ENTRIES, 2, uid)
    if entry is not None:
        return struct_passwd(entry)
    if uid is None:
        raise KeyError("getpwuid(): uid not found")
    raise KeyError("getpwuid(): uid not found: %d" % uid)


def getpwnam(*args, **kwargs):
    """Return the password database entry for the given user name.

    See `help(pwd)` for more on password database entries."""
    name = _s.check_name(_s.one_argument("pwd.getpwnam", args, kwargs), "getpwnam() argument must be str, not %s")
    entry = _s.find(_ENTRIES, 0, name)
    if entry is not None:
        return struct_passwd(entry)
    raise KeyError("getpwnam(): name not found: %r" % name)


def getpwall(*args, **kwargs):
    """Return a list of all available password database entries, in arbitrary order.

    See help(pwd) for more on password database entries."""
    _s.no_arguments("pwd.getpwall", args, kwargs)
    return [struct_passwd(entry) for entry in _ENTRIES]
