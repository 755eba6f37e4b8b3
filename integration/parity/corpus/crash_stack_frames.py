# Like crash_stack.py, a C recursion with no end in sight, here of small
# frames: hash() of a tuple nested three million deep (tuplehash calls
# itself with no recursion check). Natively the C stack runs out: SIGSEGV.
# Under wazero the compiled code's own stack reaches wazero's ceiling
# first, whose "stack overflow" comes unwrapped; it is the same death: an
# error killed_by_signal:SIGSEGV, exit status 139, with what it printed
# before. The two deaths come at different depths (native's 8 MiB of C
# stack at about a quarter of a million levels, wazero's 400 MB of machine
# stack at about 1.2 million since stop 53's smaller frames, a million
# before), so the depth is well past both.
t = ()
for _ in range(3 * 10**6):
    t = (t,)
print("built", flush=True)
print(hash(t))
