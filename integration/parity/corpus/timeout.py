# Run with a 10 s timeout: both backends end the guest, whatever it is doing.
import echo

print(echo.say(text="before the loop"), flush=True)
n = 0
while True:
    n += 1
