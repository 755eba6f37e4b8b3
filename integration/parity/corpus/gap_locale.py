import locale
import time

print("LC_ALL from the environment:", locale.setlocale(locale.LC_ALL, ""))
print("getlocale:", locale.getlocale())
print("preferred encoding:", locale.getpreferredencoding(False))
for name in ("fr_FR.UTF-8", "de_DE", "C", "POSIX"):
    try:
        print(name, "->", locale.setlocale(locale.LC_ALL, name))
    except locale.Error as e:
        print(name, "refused:", e)
locale.setlocale(locale.LC_ALL, "C")
print("strftime:", time.strftime("%A %B %p", time.gmtime(0)))
print("localeconv:", locale.localeconv()["decimal_point"], repr(locale.localeconv()["thousands_sep"]))
