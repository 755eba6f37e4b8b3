# The regrtest driver: runs CPython regression-test modules with unittest's
# own machinery and prints one line, "REGRTEST-JSON " + JSON, with every
# test id's outcome. The same file runs bare (/usr/bin/python3.11), natively
# confined and under wazero; the test package ("test", support included) is
# a copy in the current directory (the workspace), put first on sys.path.
#
# Usage: driver.py MODULE...   (e.g. test_json test_bisect)
#
# Outcomes: pass, fail, error, skip, xfail (an expected failure),
# xpass (an unexpected success). A test with a failing subtest is fail (or
# error). A module that cannot be imported is one entry, MODULE, with
# skip (it raised SkipTest, e.g. a missing C module) or error.

import io
import json
import os
import sys
import time
import traceback
import unittest

sys.path.insert(0, os.getcwd())
sys.dont_write_bytecode = True

from test import support  # noqa: E402  (after sys.path is set)
from test.support import socket_helper  # noqa: E402

# A stdlib package's own tests (unittest.test) come in the workspace's
# stdlib-tests directory, as the test package does, and are found there
# first on every side: the WASI build's stdlib zip has none, and neither
# has a host without Debian's testsuite package.
STDLIB_TESTS = os.path.join(os.getcwd(), "stdlib-tests")
if os.path.isdir(STDLIB_TESTS):
    for package in sorted(os.listdir(STDLIB_TESTS)):
        __import__(package).__path__.insert(0, os.path.join(STDLIB_TESTS, package))

# test.support guesses that WASI has no gethostname() (the WASI SDK's stub
# raises ENOTSUP); the WASI build answers as the native guest does, so the
# guess is replaced by what the interpreter does.
try:
    socket_helper.has_gethostname = bool(__import__("socket").gethostname())
except OSError:
    socket_helper.has_gethostname = False

# As `python -m test` without -u: no resource (network, cpu, decimal...)
# is enabled, so that resource-gated long tests are skipped everywhere.
support.use_resources = []
support.verbose = 0

RANK = {"pass": 0, "xfail": 0, "skip": 0, "xpass": 1, "fail": 2, "error": 3}


def load_testmock_per_module():
    """Loads unittest.test.testmock as CPython 3.12 loads it.

    3.11's testmock/__init__.py imports its modules with bare __import__s,
    so one module's SkipTest at import skips the whole package: testasync
    calls requires_working_socket(module=True), which test.support answers
    by platform name ("wasi"), and with it the 421 tests of testmock's
    other eight modules, none of which needs a socket, went unrun under
    wazero. unittest.test's own suite() skips such a module alone, and
    3.12 loads testmock with load_package_tests (discover), which does the
    same. The driver does so on every side; bare and natively nothing
    raises SkipTest, so the set of tests is unchanged there."""
    import unittest.test.testmock as testmock

    def load_tests(loader, tests, pattern):
        suite = unittest.TestSuite()
        for fn in os.listdir(testmock.here):
            if fn.startswith("test") and fn.endswith(".py"):
                modname = "unittest.test.testmock." + fn[:-3]
                try:
                    __import__(modname)
                except unittest.SkipTest as e:
                    suite.addTest(unittest.loader._make_skipped_test(modname, e, loader.suiteClass))
                    continue
                suite.addTest(loader.loadTestsFromModule(sys.modules[modname]))
        return suite

    testmock.load_tests = load_tests


def first_line(text):
    text = str(text).strip()
    line = text.splitlines()[-1] if text else ""
    return line[:300]


class Recorder(unittest.TestResult):
    """Records each test id's outcome and a one-line detail."""

    def __init__(self, outcomes):
        super().__init__()
        self.outcomes = outcomes

    def _set(self, test, outcome, detail=""):
        # A subtest's outcome is its test's: a skip inside subTest() (as
        # script_helper's requires_subprocess raises) would otherwise be
        # recorded under the subtest's own id, "test (param=...)".
        if isinstance(test, unittest.case._SubTest):
            test = test.test_case
        tid = test.id()
        old = self.outcomes.get(tid)
        if old is None or RANK[outcome] > RANK[old[0]]:
            self.outcomes[tid] = (outcome, detail)

    def _exc(self, err):
        return first_line("".join(traceback.format_exception_only(err[0], err[1])))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._set(test, "pass")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._set(test, "fail", self._exc(err))

    def addError(self, test, err):
        super().addError(test, err)
        self._set(test, "error", self._exc(err))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._set(test, "skip", first_line(reason))

    def addExpectedFailure(self, test, err):
        super().addExpectedFailure(test, err)
        self._set(test, "xfail")

    def addUnexpectedSuccess(self, test):
        super().addUnexpectedSuccess(test)
        self._set(test, "xpass")

    def addSubTest(self, test, subtest, err):
        super().addSubTest(test, subtest, err)
        if err is not None:
            failure = issubclass(err[0], test.failureException)
            self._set(test, "fail" if failure else "error", self._exc(err))


def run_module(name, outcomes):
    """Runs one test module into outcomes; legacy test_main modules run
    through support.run_unittest and run_doctest, both redirected here."""
    def run_suite(suite):
        suite.run(Recorder(outcomes))

    def run_doctest(module, verbosity=None, optionflags=0):
        import doctest
        tid = "%s.doctest(%s)" % (name, module.__name__)
        try:
            failed, tried = doctest.testmod(module, verbose=False, optionflags=optionflags)
        except Exception as e:
            outcomes[tid] = ("error", first_line(repr(e)))
            return
        outcomes[tid] = ("fail", "%d of %d failed" % (failed, tried)) if failed else ("pass", "")

    support._run_suite = run_suite
    support.run_doctest = run_doctest
    if name == "test_unittest":
        load_testmock_per_module()
    try:
        module = __import__("test." + name, fromlist=["*"])
    except unittest.SkipTest as e:
        outcomes[name] = ("skip", first_line(e))
        return
    except BaseException as e:
        outcomes[name] = ("error", first_line(repr(e)))
        return
    loader = unittest.TestLoader()
    try:
        if hasattr(module, "test_main") and not hasattr(module, "load_tests"):
            module.test_main()
        else:
            loader.loadTestsFromModule(module).run(Recorder(outcomes))
            for err in loader.errors:
                outcomes.setdefault(name, ("error", first_line(err)))
    except unittest.SkipTest as e:
        outcomes.setdefault(name, ("skip", first_line(e)))
    except BaseException as e:
        outcomes.setdefault(name + ".<run>", ("error", first_line(repr(e))))


def main(names):
    report = {"modules": {}}
    real_stdout = sys.stdout
    # Tests print; what they print goes to stderr so that stdout holds
    # only the report.
    sys.stdout = sys.stderr
    for name in names:
        outcomes = {}
        began = time.monotonic()
        run_module(name, outcomes)
        report["modules"][name] = {
            "seconds": round(time.monotonic() - began, 3),
            "tests": {tid: {"outcome": o, "detail": d} for tid, (o, d) in sorted(outcomes.items())},
        }
        support.reap_children()
    sys.stdout = real_stdout
    real_stdout.write("REGRTEST-JSON " + json.dumps(report, sort_keys=True) + "\n")
    real_stdout.flush()


if __name__ == "__main__":
    main(sys.argv[1:])
