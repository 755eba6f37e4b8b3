# A fatal error with faulthandler enabled: the report lists the threads'
# frames, then the extension modules that are not the stdlib's. Under
# wazero it ended "Extension modules: _apysup_os (total: 1)", the WASI
# build's own module, which the native report never has: the last line of
# stderr differed (wasi-https-extmods.patch).
import faulthandler
import sys

print("enabled", flush=True)
faulthandler.enable()
faulthandler._sigsegv()
print("not reached")
