"""Access to the Unix group database.

Group entries are reported as 4-tuples containing the following fields
from the group database, in order:

  gr_name   - name of the group
  gr_passwd - group password (encrypted); often empty
  gr_gid    - numeric ID of the group
  gr_mem    - list of members

The gid is an integer, name and password are strings.  (Note that most
users are not explicitly listed as members of the groups they are in
according to the password database.  Check both databases to get
complete membership information.)"""

# apysup: WASI has no group database, and CPython's WASI build no grp
# module. This one answers as the native guest's: the groups of the native
# sandbox's generated /etc/group (internal/sandbox/etc.go, which the
# wazero guest sees too; TestUserDatabasesAsNative holds the two alike),
# with the C module's errors.

import _apysup_structseq as _s

_ENTRIES = (
    ("root", "x", 0, ()),
    ("sandbox", "x", 1000, ()),
    ("nogroup", "x", 65534, ()),
)

struct_group = _s.structseq(
    "grp",
    "struct_group",
    ("gr_name", "gr_passwd", "gr_gid", "gr_mem"),
    "grp.struct_group: Results from getgr*() routines.\n\n"
    "This object may be accessed either as a tuple of\n"
    "  (gr_name,gr_passwd,gr_gid,gr_mem)\n"
    "or via the object attributes as named in the above tuple.\n",
    ("group name", "password", "group id", "group members"),
)


def _group(entry):
    name, passwd, gid, members = entry
    return struct_group((name, passwd, gid, list(members)))


def getgrgid(*args, **kwargs):
    """Return the group database entry for the given numeric group ID.

    If id is not valid, raise KeyError."""
    gid = _s.to_id(_s.one_argument_or_keyword("getgrgid", "id", args, kwargs), "gid")
    if gid is None:
        raise OverflowError("gid is less than minimum")
    entry = _s.find(_ENTRIES, 2, gid)
    if entry is not None:
        return _group(entry)
    raise KeyError("getgrgid(): gid not found: %d" % gid)


def getgrnam(*args, **kwargs):
    """Return the group database entry for the given group name.

    If name is not valid, raise KeyError."""
    name = _s.one_argument_or_keyword("getgrnam", "name", args, kwargs)
    _s.check_name(name, "getgrnam() argument 'name' must be str, not %s")
    entry = _s.find(_ENTRIES, 0, name)
    if entry is not None:
        return _group(entry)
    raise KeyError("getgrnam(): name not found: %r" % name)


def getgrall(*args, **kwargs):
    """Return a list of all available group entries, in arbitrary order.

    An entry whose name starts with '+' or '-' represents an instruction
    to use YP/NIS and may not be accessible via getgrnam or getgrgid."""
    _s.no_arguments("grp.getgrall", args, kwargs)
    return [_group(entry) for entry in _ENTRIES]
