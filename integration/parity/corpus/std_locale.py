# setlocale as glibc answers it where only the C locales exist (the
# sandbox's root holds no compiled locale): names kept as given, C.UTF-8
# for every category, the composite name of a mixed LC_ALL, locales the
# host lacks refused, the environment read per category, and nl_langinfo
# of the C locales. Under wazero python/wasi/_apysup_locale.c gives musl's
# setlocale and nl_langinfo these answers.
import locale
import os
import time

L = locale
print("LC_ALL at start:", L.setlocale(L.LC_ALL))
print("LC_ALL from the environment:", L.setlocale(L.LC_ALL, ""))
print("getlocale:", L.getlocale(), L.getlocale(L.LC_NUMERIC))
print("preferred encoding:", L.getpreferredencoding(False), L.getencoding())
for cat, name in [(L.LC_ALL, "C"), (L.LC_ALL, "POSIX"), (L.LC_ALL, "C.UTF-8"), (L.LC_ALL, "C.utf8"), (L.LC_ALL, "C.UTF8@euro"),
                  (L.LC_ALL, "fr_FR.UTF-8"), (L.LC_ALL, "de_DE"), (L.LC_ALL, "en_US.UTF-8"), (L.LC_ALL, "C.ISO-8859-1"), (L.LC_ALL, "c"),
                  (L.LC_NUMERIC, "C"), (L.LC_TIME, "POSIX"), (L.LC_MESSAGES, "C.UTF-8"), (L.LC_COLLATE, "en_US")]:
    try:
        print(cat, name, "->", L.setlocale(cat, name), "| LC_ALL:", L.setlocale(L.LC_ALL))
    except L.Error as e:
        print(cat, name, "refused:", e)
mixed = L.setlocale(L.LC_ALL)
L.setlocale(L.LC_ALL, "C")
print("mixed back:", L.setlocale(L.LC_ALL, mixed) == mixed, L.setlocale(L.LC_NUMERIC))
os.environ["LC_NUMERIC"] = "C"
print("LC_NUMERIC from the environment:", L.setlocale(L.LC_ALL, ""))
os.environ["LC_TIME"] = "en_GB.UTF-8"
try:
    L.setlocale(L.LC_ALL, "")
except L.Error as e:
    print("LC_TIME en_GB refused:", e, L.setlocale(L.LC_TIME))
os.environ["LC_ALL"] = "POSIX"
print("LC_ALL=POSIX:", L.setlocale(L.LC_ALL, ""), L.setlocale(L.LC_CTYPE, ""))
L.setlocale(L.LC_ALL, "C")
print("strftime:", time.strftime("%A %B %p", time.gmtime(0)))
print("localeconv:", L.localeconv()["decimal_point"], repr(L.localeconv()["thousands_sep"]), "{:n}".format(1234567.5))
L.setlocale(L.LC_ALL, "C.UTF-8")
print("C.UTF-8:", L.localeconv()["decimal_point"], L.format_string("%.2f", 1234.5, grouping=True), L.strcoll("a", "b") < 0, L.strxfrm("abc") == "abc")
# strcoll's value, not only its sign: glibc answers -1, 0 or 1; under
# wazero it was the difference of the first characters that differ (musl's
# wcscmp: 31 for "a" and "B"), until _apysup_locale.c's wcscoll wrapper.
words = ["", "a", "B", "b", "ab", "\u00e9", "\U0001F600", "~"]
for name in ("C", "C.UTF-8"):
    L.setlocale(L.LC_COLLATE, name)
    print(name, "strcoll:", [L.strcoll(a, b) for a in words for b in words])
    print(name, "sorted:", sorted(words, key=L.strxfrm) == sorted(words, key=__import__("functools").cmp_to_key(L.strcoll)))
items = sorted(n for n in dir(L) if n.isupper() and not n.startswith("LC_") and n != "CHAR_MAX" and isinstance(getattr(L, n), int))
for name in ("C", "C.UTF-8"):
    L.setlocale(L.LC_ALL, name)
    print(name, "nl_langinfo:", [(item, L.nl_langinfo(getattr(L, item))) for item in items])
    print(name, "encoding:", L.getencoding(), L.getpreferredencoding(False))
