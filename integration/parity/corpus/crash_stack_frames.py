# Like crash_stack.py, a C recursion with no end in sight, here of small
# frames: hash() of a tuple nested a million deep (tuplehash calls itself
# with no recursion check). Natively the C stack runs out: SIGSEGV. Under
# wazero the compiled code's own stack reaches wazero's ceiling first,
# whose "stack overflow" comes unwrapped; it is the same death: an error
# killed_by_signal:SIGSEGV, exit status 139, with what it printed before.
t = ()
for _ in range(10**6):
    t = (t,)
print("built", flush=True)
print(hash(t))
