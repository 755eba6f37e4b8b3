import sys

import echo

print("exiting with", sys.argv[1:])
echo.say(text="before exit")
arg = sys.argv[1]
sys.stdout.flush()
if arg == "none":
    sys.exit()
sys.exit(int(arg) if arg.lstrip("-").isdigit() else arg)
