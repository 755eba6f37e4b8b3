"""Run one guest script under the apysup runtime.

usage: python3.11 -I -S apysup_runner.py --prelude PRELUDE.py
           --outcome OUTCOME.json [--workdir DIR] -- SCRIPT [ARGS...]
       python3.11 -I -S apysup_runner.py --prelude PRELUDE.py
           --outcome OUTCOME.json [--workdir DIR] --argv ARGV
       python3.11 -I -S apysup_runner.py --prelude PRELUDE.py
           --outcome OUTCOME.json [--workdir DIR] --job-fd FD [--ready-fd FD]

Executes the prelude (which installs the capability modules in sys.modules
and leaves the capabilities' global names in its _main_globals), runs SCRIPT
as __main__, with those globals, with sys.argv = [SCRIPT, ARGS...] in DIR (default
/workspace, left alone when it does not exist), then writes the outcome
atomically and exits with the script's status. The outcome is the guest's
own report; the host treats it as untrusted input.

With --argv, [SCRIPT, ARGS...] is read from ARGV, each argument followed by
a NUL byte (as in /proc/PID/cmdline) and decoded as the interpreter decodes
its own command line: the backends start their sandboxes before they know
the job, so the command line cannot name the script.

With --job-fd, the same bytes are read from the inherited descriptor FD
(a pipe the host writes and closes), after one byte "R" was written to
--ready-fd: the native warm pool starts the interpreter before there is a
job, and the runner waits here, having imported nothing of the job, until
the host hands it over (its run directory and workspace are mounted in by
then). Both descriptors are closed before the prelude and the script run.

With --ready-fd (the native backend), the runner's last act before its
exit is to close its standard descriptors and write its exit status, in
decimal, to a file named "ended" beside the outcome: the host takes that
for the exit it announces and ends the run at once, where the kernel takes
milliseconds to tear the interpreter's process down (and its pid namespace
after it) before the host would see it end. It is the guest's word, as its
exit status is: a script that writes it ends its own run.

The runner is an ordinary process, never the init of its pid namespace:
the native sandbox's pid 1 is the supervisor binary's small init, which
forwards signals, reaps orphans and reports a script killed by a signal
(internal/sandbox/native/containerinit); the runner was pid 1 and forked
the script's interpreter from its own, at the cost of copying every page
the child touched.

Start-up matters: this module imports nothing beyond what the interpreter
has loaded already and os (json, traceback, runpy and signal would cost
tens of milliseconds natively, several times that under WASI). The script
runs as `python SCRIPT` runs it, in a fresh __main__ module.
"""

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


TRACEBACK_BYTES = 16 << 10
ENDED = "ended"  # the end's report, beside the outcome (sandbox.EndedFile)
MESSAGE_BYTES = 4 << 10
# The entries of a traceback the outcome formats, the last ones, as the
# interpreter's own printer shows them (PyTraceBack_LIMIT in traceback.c).
TRACEBACK_ENTRIES = 1000
USAGE = (
    "usage: apysup_runner.py --prelude PRELUDE --outcome OUTCOME "
    "[--workdir DIR] (-- SCRIPT [ARGS...] | --argv ARGV | --job-fd FD [--ready-fd FD])\n"
)


def _parse(argv):
    """Returns (prelude, outcome, workdir, script_argv) or None. script_argv
    is a list, the path of the --argv file, or the (job, ready) descriptors
    of --job-fd and --ready-fd (ready may be None); _script_argv reads it."""
    opts = {"--prelude": None, "--outcome": None, "--workdir": "/workspace", "--argv": None,
            "--job-fd": None, "--ready-fd": None}
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "--":
            rest = argv[i + 1 :]
            if not rest or opts["--argv"] is not None or opts["--job-fd"] is not None:
                return None
            break
        if arg not in opts or i + 1 >= len(argv):
            return None
        opts[arg] = argv[i + 1]
        i += 2
    else:
        rest = opts["--argv"]
        if opts["--job-fd"] is not None:
            fds = [_descriptor(opts[o]) for o in ("--job-fd", "--ready-fd")]
            if rest is not None or fds[0] is None or (opts["--ready-fd"] is not None and fds[1] is None):
                return None
            rest = tuple(fds)
    if opts["--ready-fd"] is not None and not isinstance(rest, tuple):
        return None
    if rest is None or opts["--prelude"] is None or opts["--outcome"] is None:
        return None
    return opts["--prelude"], opts["--outcome"], opts["--workdir"], rest


def _descriptor(text):
    """text as a descriptor number above stderr, or None."""
    if text is None or not text.isdigit() or int(text) < 3:
        return None
    return int(text)


def _before_job():
    """Imports what every run's prelude imports first (types,
    agent_runtime: definitions and constants only, no I/O, nothing read from
    the environment), and compiles two lines: the first compile() of a
    process sets the compiler up, about 2 ms that the prelude's compile
    would otherwise pay. Done before the job is read, so a guest started
    ahead of its job (either backend's pool) has done it when the job
    comes; nothing of a job exists in the sandbox yet.

    Then every object that exists is moved out of the collector's reach
    (gc.freeze): the interpreter's, the standard library's and the
    runner's own, none of which a job can make garbage of its own. The
    collector then walks only what the job makes: the collection at exit
    (_exit_as_interpreter) took 0.6-1.3 ms of a pooled run of `pass`
    natively, walking about 6,500 objects, and each full collection
    while a script runs walked them too."""
    import gc
    import types  # noqa: F401
    import agent_runtime  # noqa: F401

    _install_site_builtins()
    compile("def _f(a, *b, **c):\n    return a.b(*b, **c)\n", "<apysup>", "exec")
    gc.freeze()


def _install_site_builtins():
    """The builtins that `python script.py` has from the site module:
    exit and quit (which raise SystemExit), help, copyright, credits and
    license. The runner starts the interpreter with -S, so that no site
    directory reaches sys.path and no sitecustomize runs; site's builtins
    are set as site.main sets them, and nothing else of it runs (importing
    site under -S runs nothing: sys.flags.no_site stays 1)."""
    import site

    site.setquit()
    site.setcopyright()
    site.sethelper()


# The runner's own pid, set when it reports its end (_report_end): with
# --ready-fd only.
_reporter = []


def _receive_job(job, ready):
    """Says ready, then reads the job from the descriptor to its end."""
    if ready is not None:
        _reporter.append(os.getpid())
        try:
            os.write(ready, b"R")
        except OSError:
            pass  # nobody waits for it (a run that started its own sandbox)
        os.close(ready)
    chunks = []
    try:
        while True:
            chunk = os.read(job, 1 << 16)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(job)
    return b"".join(chunks)


def _script_argv(spec):
    """The script's argv: spec itself, or read from the --argv file."""
    if isinstance(spec, list):
        return spec
    _before_job()
    if isinstance(spec, tuple):
        data, spec = _receive_job(*spec), "the job"
    else:
        with open(spec, "rb") as f:
            data = f.read()
    if not data.endswith(b"\0") or data.startswith(b"\0"):
        raise ValueError("%s: not a list of NUL-terminated arguments naming a script" % spec)
    return [os.fsdecode(arg) for arg in data[:-1].split(b"\0")]


# JSON string escapes: the control characters, the quote and the backslash.
_ESCAPES = {i: "\\u%04x" % i for i in range(0x20)}
_ESCAPES.update({ord('"'): '\\"', ord("\\"): "\\\\", ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t"})


def _json_string(text):
    """text as a JSON string; lone surrogates (from undecodable bytes)
    become U+FFFD, so that the outcome is valid UTF-8."""
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return '"' + text.translate(_ESCAPES) + '"'


def _json_object(doc):
    """doc (str keys; str, int, bool or dict values) as a JSON object."""
    items = []
    for key, value in doc.items():
        if isinstance(value, dict):
            value = _json_object(value)
        elif isinstance(value, bool):
            value = "true" if value else "false"
        elif isinstance(value, int):
            value = str(value)
        else:
            value = _json_string(value)
        items.append(_json_string(key) + ":" + value)
    return "{" + ",".join(items) + "}"


def _bounded(text, limit, keep_tail):
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    cut = data[-limit:] if keep_tail else data[:limit]
    return cut.decode("utf-8", "ignore")


def _internal(filename):
    return filename == __file__


def _user_traceback(tb):
    """Drop the runner's frames, as `python script.py` shows none."""
    while tb is not None and _internal(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    return tb


def _drop_runner_frames(exc):
    """Drops the runner's frames from the head of exc's traceback and
    returns what is left. BaseException's own descriptors are used: the
    script's exception class may override them."""
    tb = _user_traceback(BaseException.__dict__["__traceback__"].__get__(exc))
    BaseException.with_traceback(exc, tb)
    return tb


def _last_entries(tb, count):
    """The last `count` entries of a traceback chain.

    A script that recursed a million deep before it failed leaves a chain of
    a million entries: traceback.format_exception reads every one (each
    entry's source position, its FrameSummary) before it prints the last
    ones, which takes seconds natively and a minute under wazero. Following
    tb_next costs tens of nanoseconds an entry.
    """
    lead = tb
    for _ in range(count):
        if lead is None:
            return tb
        lead = lead.tb_next
    while lead is not None:
        lead = lead.tb_next
        tb = tb.tb_next
    return tb


def _trim_tracebacks(exc):
    """Trim the traceback of an exception and of every one it links to.

    format_exception formats the exceptions it was raised from or during
    (__cause__, __context__) and, for an exception group, its members, each
    with its own traceback. The runner owns them once the script has ended,
    and the interpreter's printer (sys.excepthook) shows only the last
    TRACEBACK_ENTRIES entries of each, so what it prints does not change.
    """
    seen = set()
    pending = [exc]
    while pending:
        exc = pending.pop()
        if exc is None or id(exc) in seen:
            continue
        seen.add(id(exc))
        tb = exc.__traceback__
        if tb is not None:
            exc.__traceback__ = _last_entries(tb, TRACEBACK_ENTRIES)
        pending.append(exc.__cause__)
        pending.append(exc.__context__)
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)


def _describe(exc, tb):
    cls = type(exc)
    try:
        # type's own attributes: a metaclass may override them.
        name = type.__dict__["__qualname__"].__get__(cls)
        module = type.__dict__["__module__"].__get__(cls)
        if module not in ("builtins", "__main__"):
            name = "%s.%s" % (module, name)
        name = str(name)
    except BaseException:
        name = "<unknown>"
    # The exception's own code runs here (__str__, __repr__ of its
    # arguments): what it raises, SystemExit and KeyboardInterrupt too, is
    # swallowed, as the interpreter's printer swallows it.
    try:
        message = str(exc)
    except BaseException:
        message = "<unprintable %s>" % name.rpartition(".")[2]
    try:
        import traceback

        text = "".join(traceback.format_exception(cls, exc, tb))
    except BaseException:
        text = "%s: %s\n" % (name, message)
    return {
        "type": name,
        "message": _bounded(message, MESSAGE_BYTES, False),
        "traceback": _bounded(text, TRACEBACK_BYTES, True),
    }


def _exit_status(code):
    """What the process exit status becomes for SystemExit(code)."""
    if code is None:
        return 0
    if issubclass(type(code), int):
        # The interpreter takes it as a C long (PyLong_AsLong) when it is an
        # int (PyLong_Check: a subclass too, by its value, whatever its own
        # operators say; isinstance would believe a __class__ that lies):
        # one out of its range is -1, the error cleared.
        code = int.__index__(code)
        if not -(1 << 63) <= code < 1 << 63:
            return 0xFF
        return code & 0xFF
    _write_stderr(code)
    _write_stderr("\n")
    return 1


def _write_stderr(text):
    """Writes str(text) to sys.stderr as the interpreter's own messages
    are written (PySys_WriteStderr, PyFile_WriteObject): whatever fails,
    the script's own code included, is ignored."""
    try:
        sys.stderr.write(str(text))
    except BaseException:
        pass


def _display(exc, tb):
    """The interpreter's own printer (PyErr_Display), which swallows what
    fails in it."""
    try:
        sys.__excepthook__(type(exc), exc, tb)
    except BaseException:
        pass


def _report_uncaught(exc):
    """The exit status and the outcome's error for an exception the script
    left uncaught, once printed as the interpreter prints it."""
    tb = None
    try:
        tb = _drop_runner_frames(exc)
        _trim_tracebacks(exc)
        tb = exc.__traceback__
    except BaseException:
        pass
    error = _describe(exc, tb)
    hook_status = _print_uncaught(exc, tb)
    if hook_status is not None:
        return hook_status, error
    if type(exc) is KeyboardInterrupt:  # as run_eval_code_obj tests it: not a subclass
        _interrupted.append(True)
    return 1, error


_MISSING = object()


def _print_uncaught(exc, tb):
    """Hands an uncaught exception to sys.excepthook as the interpreter
    does at the end of `python script.py` (_PyErr_PrintEx): a missing hook
    is reported, a hook's SystemExit sets the exit status (returned; None
    otherwise), and anything else it raises is printed before the
    original exception."""
    hook = getattr(sys, "excepthook", _MISSING)
    if hook is _MISSING:
        _write_stderr("sys.excepthook is missing\n")
        _display(exc, tb)
        return None
    try:
        hook(type(exc), exc, tb)
    except SystemExit as hook_exit:
        return _exit_status(hook_exit.code)
    except BaseException as hook_error:
        _write_stderr("Error in sys.excepthook:\n")
        tb_hook = None
        try:
            tb_hook = _drop_runner_frames(hook_error)
        except BaseException:
            pass
        _display(hook_error, tb_hook)
        _write_stderr("\nOriginal exception was:\n")
        _display(exc, tb)
    return None


def _write_outcome(path, exit_code, error):
    import agent_runtime

    result_set, result = agent_runtime._take_result()
    doc = {"exit_code": exit_code, "result_set": result_set}
    if error is not None:
        doc["error"] = error
    text = _json_object(doc)
    if result_set:
        text = text[:-1] + ',"result":' + result + "}"
    tmp = "%s.tmp-%d" % (path, os.getpid())
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        try:
            os.fsync(f.fileno())
        except (OSError, AttributeError):
            pass  # not every filesystem (or WASI) offers it; the rename still is atomic
    os.replace(tmp, path)


def _check_utf8(source, path):
    """Refuse a script that declares no encoding and is not UTF-8 with the
    error `python path` gives: its file tokenizer names the first byte that
    is not UTF-8 and its line, where compile() of the same bytes says
    "(unicode error) 'utf-8' codec can't decode ..." about the first string
    literal that holds one."""
    try:
        source.decode("utf-8")
        return
    except UnicodeDecodeError as e:
        bad = e.start
    if source.startswith(b"\xef\xbb\xbf"):
        return  # a BOM declares UTF-8: compile() reports it as python does
    import tokenize  # only for a script that is not UTF-8
    for i, line in enumerate(source.split(b"\n", 2)[:2]):
        if tokenize.cookie_re.match(line.decode("latin-1")):
            return  # an encoding declared: compile() decodes as python does
        if i == 0 and not tokenize.blank_re.match(line):
            break
    raise SyntaxError("Non-UTF-8 code starting with '\\x%02x' in file %s on line %d, but no encoding declared; "
                      "see https://peps.python.org/pep-0263/ for details"
                      % (source[bad], path, source.count(b"\n", 0, bad) + 1))


def _run_main(path, installed):
    """Run the file at path as `python path` does: compiled from source, in
    a fresh module named __main__ (sys.modules["__main__"] while it runs)
    whose namespace starts with the names in installed (the Plan's Python
    globals: the script calls them without an import, and its own
    assignments or imports rebind them as they would any global)."""
    with open(path, "rb") as f:
        source = f.read()
    _check_utf8(source, path)
    code = compile(source, path, "exec", dont_inherit=True)
    module = type(sys)("__main__")
    module.__file__ = path
    module.__cached__ = None
    module.__loader__ = None
    module.__package__ = None
    module.__spec__ = None
    module.__dict__.update(installed)
    runner = sys.modules["__main__"]
    sys.modules["__main__"] = module
    _script_modules.append(module)
    try:
        exec(code, module.__dict__)
    finally:
        sys.modules["__main__"] = runner


# The script's module, once _run_main has made it: its globals are
# released at exit (_exit_as_interpreter), then those of the modules of
# the job's own that it imported.
_script_modules = []
_modules_before_job = set()


def _job_modules():
    """The modules the job imported from files of its own (the workspace,
    /tmp), latest first, as the interpreter's teardown clears them: not the
    standard library's, not the runner's."""
    stdlib = os.path.dirname(os.__file__)
    ours = []
    for name, module in reversed(list(sys.modules.items())):
        path = getattr(module, "__file__", None)
        if name in _modules_before_job or not isinstance(path, str):
            continue
        if path.startswith(stdlib) or path.startswith(_HERE):
            continue
        ours.append(module)
    return ours


def _release_globals(module):
    """Releases module's globals as the interpreter's teardown releases
    __main__'s (_PyModule_ClearDict): names starting with one underscore
    set to None first, then every other but __builtins__, in the order
    they were bound. Each object then goes the way reference counting
    takes it: a file the script left open is flushed, then closed, by its
    own buffered writer, as `python script.py` does; the collector then
    finalizes what was left in cycles."""
    d = module.__dict__
    for name in list(d):
        if name[:1] == "_" and name[1:2] != "_":
            d[name] = None
    for name in list(d):
        if name != "__builtins__":
            d[name] = None


def main(argv):
    parsed = _parse(argv)
    if parsed is None:
        sys.stderr.write(USAGE)
        return 2
    prelude, outcome, workdir, script_argv = parsed
    # The job directory (the prelude's) is complete once the job is read.
    streams = not isinstance(script_argv, list)
    try:
        script_argv = _script_argv(script_argv)
    except (OSError, ValueError) as exc:
        sys.stderr.write("apysup_runner: the script's argv: %s\n" % exc)
        return 2
    if streams and os.path.exists(os.path.join(os.path.dirname(prelude), ".stream")):
        # The host streams the output to its caller: each line leaves as it
        # is printed, as on a terminal (on a pipe CPython would hold stdout
        # until 8 KiB or the end of the run; one write per 8 KiB is cheaper
        # when nobody watches).
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.reconfigure(line_buffering=True)
            except Exception:
                pass
    exit_code, error, uncaught = 0, None, None
    try:
        if os.path.isdir(workdir):
            os.chdir(workdir)
        with open(prelude, "rb") as f:
            code = compile(f.read(), prelude, "exec")
        namespace = {"__name__": "__apysup_prelude__", "__builtins__": __builtins__}
        _modules_before_job.update(sys.modules)
        exec(code, namespace)
        sys.argv = list(script_argv)
        # The command that runs the script as the runner does, the same on
        # both backends: not the runner's own command line (its descriptor
        # numbers, its --argv file), which differs between them.
        sys.orig_argv = [sys.executable, "-I", "-S"] + sys.argv
        _run_main(script_argv[0], namespace.get("_main_globals", {}))
    except SystemExit as exc:
        exit_code = _exit_status(exc.code)
    except BaseException as exc:
        uncaught = exc
    if uncaught is not None:
        # Reported outside the except clause, as the interpreter reports
        # it: what the hook raises is not chained to it.
        exit_code, error = _report_uncaught(uncaught)
    _flush_streams()
    # Written at the very end (_exit_as_interpreter), once what the script
    # left is released: a script that ends holding every descriptor it may
    # have in its globals has them closed by then, as at the end of
    # `python script.py`, and its outcome can still be written.
    _outcome[:] = [(outcome, exit_code, error)]
    return exit_code


# The outcome main leaves for _exit_as_interpreter to write.
_outcome = []
# Set when the script ended with an uncaught KeyboardInterrupt.
_interrupted = []


def _exit_as_interpreter(code):
    """Ends the process as the interpreter's exit does, as far as a script
    can tell: non-daemon threads are joined, atexit callbacks run, the
    standard streams flushed, the script's own globals released, then
    those of the modules of its own it imported (files left open are
    flushed and closed, objects' __del__ methods and suspended generators'
    finally clauses run, as they do at the end of `python script.py`), the
    collector run once; then it exits without
    tearing the rest of the interpreter down (freeing every object, module
    by module), which was a large part of a pooled run, and more of a run
    under WASI. What a script cannot rely on at exit anyway (__del__ of
    objects the standard library's modules still hold, as the language
    reference says) does not run. The outcome is written last. The same on
    both backends."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:
            pass
    _run_atexit()
    if not _flush_at_exit():
        # As Py_FinalizeEx fails, and python exits 120.
        code = _exit_with(120)
    try:
        for module in _script_modules + _job_modules():
            _release_globals(module)
        import gc

        gc.collect()
    except BaseException:
        pass  # as the teardown: what fails there changes no exit status
    if _interrupted:
        code = _die_interrupted()
    for path, exit_code, error in _outcome:
        try:
            _write_outcome(path, exit_code, error)
        except BaseException:
            # The script spoiled it (descriptors held where nothing
            # releases them, a directory at its name): the runner fails by
            # itself, as an uncaught exception ends an interpreter.
            try:
                sys.excepthook(*sys.exc_info())
            except BaseException:
                pass
            code = 1
    _flush_streams()
    _report_end(code)
    os._exit(code)


def _exit_with(code):
    """Makes code the exit status the outcome records; returns it."""
    _outcome[:] = [(path, code, error) for path, _, error in _outcome]
    return code


def _die_interrupted():
    """Ends the process as the interpreter ends after an uncaught
    KeyboardInterrupt (exit_sigint in CPython's Modules/main.c): killed by
    SIGINT, with its default action restored, so that whoever started
    it sees the interrupt. The host then reports an error killed by
    SIGINT, exit status 130, on both backends (the WASI build's raise
    ends the guest as natively: python/wasi/_apysup_signal.c). Where the
    signal does not end the process (the script blocked it), the exit
    status is 130, as there; the outcome is written then."""
    import signal

    _flush_streams()  # as the interpreter's finalization has, before the signal
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        signal.raise_signal(signal.SIGINT)
    except BaseException:
        pass
    return _exit_with(128 + signal.SIGINT)


def _report_end(code):
    """Tells the host that the runner exits with code (the module's
    docstring), its standard descriptors closed first, so that the host's
    ends of them see no more output. Only the runner's own process
    reports: a child the script forked that returns through here ends as
    it did before."""
    if not _reporter or _reporter[0] != os.getpid() or not _outcome:
        return
    for fd in (0, 1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    path = os.path.join(os.path.dirname(_outcome[0][0]), ENDED)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            os.write(fd, b"%d" % (code & 0xFF))
        finally:
            os.close(fd)
    except OSError:
        pass  # the host then learns the exit from the kernel


def _run_atexit():
    """Runs atexit's callbacks as the interpreter's exit runs them. atexit
    reports what a callback raises as an unraisable exception; the
    interpreter runs them from no Python frame, and an exception that a
    builtin callback raises (atexit.register(sys.exit, 7)) has no
    traceback of its own, so PyErr_WriteUnraisable shows none, where here
    it would show the runner's frame: the hook is handed the frames below
    the runner's only."""
    import atexit

    hook = sys.unraisablehook

    def forward(args):
        tb = _user_traceback(args.exc_traceback)
        hook(type(args)((args.exc_type, args.exc_value, tb, args.err_msg, args.object)))

    sys.unraisablehook = forward
    try:
        atexit._run_exitfuncs()
    finally:
        if sys.unraisablehook is forward:
            sys.unraisablehook = hook


def _flush_at_exit():
    """Flushes sys.stdout and sys.stderr as the interpreter's finalization
    does (flush_std_files): a stream that says it is closed is left alone,
    stdout's failure is reported as an unraisable exception, stderr's
    silently. False when either failed (a script that closed descriptor 1
    with output still buffered)."""
    ok = True
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        try:
            closed = bool(stream.closed)
        except BaseException:
            closed = False
        if stream is None or closed:
            continue
        try:
            stream.flush()
        except BaseException as exc:
            ok = False
            if name == "stdout":
                _unraisable(exc, stream)
    return ok


def _unraisable(exc, obj):
    """Hands exc to sys.unraisablehook as PyErr_WriteUnraisable(obj) does
    where no Python frame runs: "Exception ignored in: repr(obj)", then
    the exception, with the frames it was raised in below the runner's
    (none for a stream's own flush). The hook's argument type is not
    public: an unraisable exception of the runner's own, caught by a hook
    of its own, brings it."""
    try:
        kinds = []
        hook = sys.unraisablehook
        sys.unraisablehook = lambda args: kinds.append(type(args))

        class _Probe:
            def __del__(self):
                raise RuntimeError

        _Probe()
        sys.unraisablehook = hook
        tb = _drop_runner_frames(exc)  # the flush's own frames only
        hook(kinds[0]((type(exc), exc, tb, None, obj)))
    except BaseException:
        pass


def _flush_streams():
    """Flushes the standard streams, the interpreter's own too where the
    script replaced them (its finalization puts sys.__stdout__ and
    sys.__stderr__ back and flushes them again), ignoring what fails."""
    flushed = []
    for name in ("stdout", "stderr", "__stdout__", "__stderr__"):
        stream = getattr(sys, name, None)
        if stream is None or any(stream is done for done in flushed):
            continue  # the interpreter's own, not replaced: flushed already
        flushed.append(stream)
        try:
            stream.flush()
        except BaseException:
            pass


if __name__ == "__main__":
    # Parsed first: main sets sys.argv to the script's.
    parsed = _parse(sys.argv[1:])
    code = main(sys.argv[1:])
    if parsed is not None:
        _exit_as_interpreter(code)
    sys.exit(code)  # usage
