package regrtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

// A chosen module's siblings come with it into the seed: a module as its
// .py file, a package (test.test_importlib) as its directory; a stdlib
// package's own tests (unittest.test) as a directory of stdlib-tests, with
// the test modules they import; and what each of those imports in turn (a
// package's files count too).
func TestBuildSeedCopiesSiblings(t *testing.T) {
	_, err := os.Stat(filepath.Join(stdlibTestDir, "support", "__init__.py"))
	testenv.Need(t, err == nil, "test.support in "+stdlibTestDir+" (Debian's libpython3.11-stdlib)")
	// As the testsuite package installs it: lib/test beside lib/unittest/test.
	lib := t.TempDir()
	suite := filepath.Join(lib, "test")
	t.Setenv("APYSUP_REGRTEST_TESTSUITE", suite)
	testenv.WriteTree(t, lib, map[string]string{
		"unittest/test/__init__.py":  "",
		"unittest/test/test_case.py": "from unittest.test.test_result import X\nimport test.test_helped\ntest.test_made_here()\n",
	})
	files := map[string]string{
		"test_chosen.py":          "from test import test_module\nimport test.test_pkg.sub\nimport unittest.test\n",
		"test_helped.py":          "",
		"test_result.py":          "",
		"test_module.py":          "X = 1\n",
		"test_pkg/__init__.py":    "",
		"test_pkg/sub.py":         "Y = 2\nfrom test.test_deep import Z\n",
		"test_deep.py":            "import test.test_deeper\nx = 'test.test_named_not_imported'\n",
		"test_deeper.py":          "",
		"test_unrelated.py":       "",
		"test_pkg/data/input.txt": "data\n",
	}
	testenv.WriteTree(t, suite, files)
	seed := t.TempDir()
	if err := buildSeed(seed, []string{"test_chosen"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"test_chosen.py", "test_module.py", "test_pkg/__init__.py", "test_pkg/sub.py",
		"test_pkg/data/input.txt", "support/__init__.py", "test_deep.py", "test_deeper.py"} {
		if _, err := os.Stat(filepath.Join(seed, "test", want)); err != nil {
			t.Errorf("seed lacks test/%s: %v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(seed, "test", "test_unrelated.py")); err == nil {
		t.Error("seed holds test_unrelated.py, which nothing chose")
	}
	// unittest.test comes whole, with the test modules it imports
	// (test_helped), and not the ones its own package holds (test_result).
	for _, want := range []string{"stdlib-tests/unittest/test/__init__.py", "stdlib-tests/unittest/test/test_case.py", "test/test_helped.py"} {
		if _, err := os.Stat(filepath.Join(seed, want)); err != nil {
			t.Errorf("seed lacks %s: %v", want, err)
		}
	}
	if _, err := os.Stat(filepath.Join(seed, "test", "test_result.py")); err == nil {
		t.Error("seed holds test/test_result.py, which only unittest.test.test_result names")
	}
}
