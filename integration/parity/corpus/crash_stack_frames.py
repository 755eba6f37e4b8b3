# Like crash_stack.py, a C recursion with no end in sight, here of small
# frames: hash() of a tuple nested three million deep (tuplehash calls
# itself with no recursion check). Natively the C stack runs out: SIGSEGV.
# Under wazero the compiled code's own stack runs out first: it grows as
# far as the run's memory limit lets it (counted with the linear memory,
# internal/sandbox/wazero/memory.go), and its "stack overflow" comes
# unwrapped; it is the same death: an error killed_by_signal:SIGSEGV,
# exit status 139, with what it printed before. The two deaths come at
# different depths (native's 8 MiB of C stack at about a quarter of a
# million levels; under wazero's default 512 MiB limit at about 2
# million, 1.2 million taking 170 MiB), so the depth is well past both.
t = ()
for _ in range(3 * 10**6):
    t = (t,)
print("built", flush=True)
print(hash(t))
