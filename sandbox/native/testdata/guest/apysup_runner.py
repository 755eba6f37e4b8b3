# Minimal stand-in for python/guest/apysup_runner.py, used by the native
# backend tests until the python package exposes python.GuestFiles.
import json, runpy, sys, traceback

def main(argv):
    prelude = outcome = None
    i = 0
    while argv[i] != "--":
        if argv[i] == "--prelude":
            prelude = argv[i + 1]
        elif argv[i] == "--outcome":
            outcome = argv[i + 1]
        i += 2
    script, args = argv[i + 1], argv[i + 2:]
    sys.argv = [script] + args
    res = {"exit_code": 0, "result_set": False}
    try:
        if prelude:
            runpy.run_path(prelude, run_name="__apysup_prelude__")
        runpy.run_path(script, run_name="__main__")
    except SystemExit as e:
        code = e.code
        res["exit_code"] = code if isinstance(code, int) else (0 if code is None else 1)
    except BaseException as e:
        res["exit_code"] = 1
        res["error"] = {"type": type(e).__name__, "message": str(e), "traceback": traceback.format_exc()}
        traceback.print_exc()
    sys.stdout.flush()
    with open(outcome, "w") as f:
        json.dump(res, f)
    return res["exit_code"]

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
