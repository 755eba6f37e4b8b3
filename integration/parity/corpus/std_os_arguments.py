# Wrong arguments to the os functions the WASI build writes in Python, as
# both backends refuse them: natively each is posixmodule's C function,
# whose Argument Clinic code refuses a wrong count or an unknown keyword
# with messages of its own (METH_NOARGS, METH_O, _PyArg_CheckPositional,
# _PyArg_ParseStack, _PyArg_UnpackKeywords); under wazero the emulations
# (wasi-os-ids.patch, wasi-kill.patch, wasi-chmod-terminal.patch,
# wasi-os-sched.patch) are wrapped to refuse them alike, and carry the
# same signature. Calls that pass the checks print only their outcome's
# type, and each function's module and text signature are printed.
import os

NAMES = ["getuid", "geteuid", "getgid", "getegid", "getresuid", "getresgid", "getgroups", "getppid",
         "setuid", "seteuid", "setreuid", "setresuid", "setgid", "setegid", "setregid", "setresgid",
         "setgroups", "initgroups", "getgrouplist", "getpriority", "setpriority", "getpgrp",
         "getpgid", "getsid", "setpgid", "setpgrp", "setsid", "kill", "get_terminal_size",
         "sched_get_priority_max", "sched_get_priority_min", "sched_getscheduler",
         "sched_setscheduler", "sched_getparam", "sched_setparam", "sched_rr_get_interval",
         "sched_getaffinity", "sched_setaffinity"]
SHAPES = [((), {}), ((0,) * 5, {}), ((), {"x": 1}), ((0,), {"x": 1}), ((0, 0, 0), {"x": 1}),
          ((), {"pid": 0}), ((0,), {"pid": 0}), ((), {"which": 0, "who": 0}),
          ((), {"which": 0, "who": 0, "x": 1}), ((0,), {"who": 0}), ((0,), {"which": 0}),
          ((), {"policy": 0}), ((), {"policy": 0, "x": 2}), ((), {"fd": 1})]
for name in NAMES:
    f = getattr(os, name)
    print(name, f.__module__, f.__text_signature__)
    for args, kwargs in SHAPES:
        try:
            result = type(f(*args, **kwargs)).__name__
        except TypeError as e:
            result = "TypeError: %s" % e
        except Exception as e:  # the call got past its arguments
            result = type(e).__name__
        print("   ", args, kwargs, result)

# os executed afresh (test.support's import_fresh_module does it): the
# names the WASI build put into posix are there already, and the module
# still comes out whole (it raised NameError under wazero).
import importlib.util

spec = importlib.util.find_spec("os")
fresh = importlib.util.module_from_spec(spec)
spec.loader.exec_module(fresh)
print("fresh os", sorted(set(dir(os)) ^ set(dir(fresh))), fresh.kill is os.kill, fresh.getuid is os.getuid)
