# site's builtins, as `python script.py` has them though the runner starts
# the interpreter with -S: exit() and quit() end the script with
# SystemExit, help, copyright, credits and license exist.
import sys

print(sys.flags.no_site, repr(exit), repr(quit), type(help).__name__)
print(repr(copyright).splitlines()[0], repr(credits).split()[:2], repr(license))
try:
    quit(3)
except SystemExit as e:
    print("quit raised SystemExit", e.code)
exit(4)
