// Package regrtest is the standing differential run of CPython's own
// regression tests (issue 17): the modules of modules.txt, from Debian's
// libpython3.11-testsuite, run three ways (bare /usr/bin/python3.11,
// natively confined, and under wazero) through driver.py, which records
// every test id's outcome with unittest's machinery. Each backend's
// outcomes are compared with bare's, and every difference must be listed
// in expected.txt with a cause (a documented confinement gap, a WASI gap or
// a known bug). A new difference, a changed one, an unexplained one and a
// stale one (listed, but no longer happening) all fail.
//
// `go test` runs the modules marked fast (make test); `-regrtest.all` runs
// the whole set (make regrtest); `-regrtest.update` rewrites expected.txt
// from the run, keeping the cause of every entry that still applies and
// marking the rest UNEXPLAINED unless a [rules] line names their cause
// (make regrtest-update). docs/parity.md has the numbers.
//
// The test package (test.support and the chosen modules) is copied into
// each run's workspace, so that every side imports the same files whether
// or not the sandbox sees /usr/lib/python3.11/test (the WASI build's stdlib
// zip leaves it out). APYSUP_REGRTEST_TESTSUITE names another
// directory holding the testsuite (an unpacked .deb) on a host where the
// package is not installed.
package regrtest
