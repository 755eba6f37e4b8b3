# The locale module's gettext family, as glibc answers it in the sandbox:
# the locale is C.UTF-8 and there are no catalogs, so a message is its own
# translation; the text domain, and each domain's directory and codeset,
# are kept as set. Under wazero python/wasi/_apysup_messages.c answers.
import gettext
import locale as L

print([n for n in ("gettext", "dgettext", "dcgettext", "textdomain", "bindtextdomain", "bind_textdomain_codeset") if hasattr(L, n)])
print(repr(L.textdomain(None)), repr(L.gettext("Hello")), repr(L.dgettext("x", "Hi")), repr(L.dgettext(None, "Hi")))
print(repr(L.dcgettext("x", "Yo", L.LC_MESSAGES)), repr(L.dcgettext(None, "Yo", L.LC_ALL)))
print(repr(L.textdomain("myapp")), repr(L.textdomain(None)), repr(L.textdomain("")), repr(L.textdomain(None)))
print(repr(L.textdomain("messages")), repr(L.textdomain("again")), repr(L.textdomain(None)))
print(repr(L.bindtextdomain("myapp", None)), repr(L.bindtextdomain("myapp", "/workspace/locale")), repr(L.bindtextdomain("myapp", None)))
print(repr(L.bindtextdomain("other", "rel/dir")), repr(L.bindtextdomain("other", None)), repr(L.bindtextdomain("myapp", None)))
try:
    L.bindtextdomain("", None)
except L.Error as e:
    print("Error", e)
print(repr(L.bind_textdomain_codeset("myapp", None)), repr(L.bind_textdomain_codeset("myapp", "UTF-8")), repr(L.bind_textdomain_codeset("myapp", None)))
print(repr(L.bind_textdomain_codeset("third", None)), repr(L.bind_textdomain_codeset("third", "ISO-8859-1")), repr(L.bindtextdomain("third", None)))
print(repr(L.gettext("")), repr(L.gettext("é ünï ✓")))
# The gettext module finds catalogs itself, in Python: none here.
gettext.bindtextdomain("myapp", "/workspace/locale")
gettext.textdomain("myapp")
print(repr(gettext.gettext("Hello")), repr(gettext.dgettext("myapp", "Hi")), repr(gettext.ngettext("one", "many", 2)))
