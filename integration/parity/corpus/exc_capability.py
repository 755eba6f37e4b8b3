# An uncaught CapabilityError ends the run like any exception.
import fail

print("calling")
fail.always()
