"""Struct sequences in Python, for the WASI build's pwd and grp modules.

apysup: CPython makes these types in C (PyStructSequence); the WASI
build's pwd and grp are Python, and their results must look like the
native guest's: tuples whose items are also attributes, printed with their
names, pickled as (type, (tuple, {}))."""

from operator import index as _index


def structseq(module, name, fields, doc, field_docs):
    n = len(fields)
    qualified = module + "." + name

    def __new__(cls, sequence, dict=None):
        items = tuple(sequence)
        if len(items) != n:
            raise TypeError("%s() takes a %d-sequence (%d-sequence given)" % (qualified, n, len(items)))
        return tuple.__new__(cls, items)

    def __repr__(self):
        return "%s(%s)" % (qualified, ", ".join("%s=%r" % (f, v) for f, v in zip(fields, self)))

    def __reduce__(self):
        return (type(self), (tuple(self), {}))

    ns = {
        "__slots__": (),
        "__module__": module,
        "__doc__": doc,
        "__new__": __new__,
        "__repr__": __repr__,
        "__reduce__": __reduce__,
        "__match_args__": fields,
        "n_sequence_fields": n,
        "n_fields": n,
        "n_unnamed_fields": 0,
    }
    for i, (field, field_doc) in enumerate(zip(fields, field_docs)):
        ns[field] = _Field(i, field_doc)
    return type(name, (tuple,), ns)


class _Field:
    # An item of a struct sequence as an attribute, read-only as a C
    # member is; its __doc__ is the field's.
    __slots__ = ("index", "__doc__")

    def __init__(self, index, doc):
        self.index, self.__doc__ = index, doc

    def __get__(self, obj, owner=None):
        return self if obj is None else tuple.__getitem__(obj, self.index)

    def __set__(self, obj, value):
        raise AttributeError("readonly attribute")

    def __delete__(self, obj):
        raise AttributeError("readonly attribute")


def one_argument(qualified, args, kwargs):
    """The argument of a C function taking exactly one, positionally."""
    if kwargs:
        raise TypeError("%s() takes no keyword arguments" % qualified)
    if len(args) != 1:
        raise TypeError("%s() takes exactly one argument (%d given)" % (qualified, len(args)))
    return args[0]


def one_argument_or_keyword(function, keyword, args, kwargs):
    """The argument of a C function taking exactly one, positionally or
    by its keyword (Argument Clinic's)."""
    given = len(args) + len(kwargs)
    if given > 1:
        raise TypeError("%s() takes at most 1 argument (%d given)" % (function, given))
    if args:
        return args[0]
    if keyword not in kwargs:
        raise TypeError("%s() missing required argument '%s' (pos 1)" % (function, keyword))
    return kwargs[keyword]


def no_arguments(qualified, args, kwargs):
    if kwargs:
        raise TypeError("%s() takes no keyword arguments" % qualified)
    if args:
        raise TypeError("%s() takes no arguments (%d given)" % (qualified, len(args)))


def to_id(value, what):
    """value as CPython's uid_t and gid_t converters take it: an integer
    from -1 to 2**32-1 (2**32-1 is -1); None when out of that range."""
    if not hasattr(type(value), "__index__"):
        raise TypeError("%s should be integer, not %s" % (what, type(value).__name__))
    value = _index(value)
    if value == 0xFFFFFFFF:
        return -1
    if not -1 <= value < 0xFFFFFFFF:
        return None
    return value


def check_name(value, message):
    if not isinstance(value, str):
        raise TypeError(message % type(value).__name__)
    if "\0" in value:
        raise ValueError("embedded null byte")
    return value


def find(entries, field, value):
    """The first of the database's entries whose field holds value, or None."""
    for entry in entries:
        if entry[field] == value:
            return entry
    return None
