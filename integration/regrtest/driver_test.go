package regrtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

// TestTestmockSkipsOneModuleAlone: where test.support says there are no
// sockets (its answer on WASI, by platform name), testmock's testasync
// skips at import, and the driver records that module's skip alone and
// runs the package's other modules, as CPython 3.12 loads it. 3.11's own
// loader let the skip take the whole package (one _FailedTest, no mock
// test run). Bare: the flag is what differs, not the interpreter.
func TestTestmockSkipsOneModuleAlone(t *testing.T) {
	_, err := os.Stat(filepath.Join(testsuiteDir(), "test_unittest.py"))
	testenv.Need(t, err == nil, "CPython's test modules in "+testsuiteDir()+" (Debian's libpython3.11-testsuite: make deps)")
	driver, err := filepath.Abs(driverFile)
	if err != nil {
		t.Fatal(err)
	}
	seed := t.TempDir()
	if err := buildSeed(seed, []string{"test_unittest"}); err != nil {
		t.Fatal(err)
	}
	wrapper := filepath.Join(t.TempDir(), "no_sockets.py")
	if err := os.WriteFile(wrapper, []byte(fmt.Sprintf(`import os, runpy, sys
sys.path.insert(0, os.getcwd())
from test import support
support.has_socket_support = False
sys.argv[0] = %q
runpy.run_path(%q, run_name="__main__")
`, driver, driver)), 0o644); err != nil {
		t.Fatal(err)
	}
	run := runBare(context.Background(), wrapper, seed, "test_unittest")
	const skipped = "unittest.loader.ModuleSkipped.unittest.test.testmock.testasync"
	if o := run.Tests[skipped]; o.Outcome != "skip" || o.Detail != "requires socket support" {
		t.Errorf("%s: %+v, want skip (requires socket support)", skipped, o)
	}
	passed := map[string]int{}
	for id, o := range run.Tests {
		if mod, ok := strings.CutPrefix(id, "unittest.test.testmock."); ok && o.Outcome == "pass" {
			passed[strings.Split(mod, ".")[0]]++
		}
	}
	for _, mod := range []string{"testcallable", "testhelpers", "testmagicmethods", "testmock", "testpatch", "testsealable", "testsentinel", "testwith"} {
		if passed[mod] == 0 {
			t.Errorf("no test of testmock.%s passed (%d tests recorded in all)", mod, len(run.Tests))
		}
	}
	if passed["testasync"] != 0 {
		t.Errorf("%d tests of testasync ran", passed["testasync"])
	}
}
