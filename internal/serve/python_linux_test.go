package serve

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// TestPythonClient runs clients/python's tests with Debian's python3.11
// against a real server, after installing the client with pip into a
// temporary target, with pip's build isolation and no package index: the
// package builds with its own backend (apysup_build.py), installs from its
// directory offline and works from there, standard library only.
func TestPythonClient(t *testing.T) {
	ls := startServer(t, Config{})
	src, err := filepath.Abs("../../clients/python")
	if err != nil {
		t.Fatal(err)
	}
	target := t.TempDir()
	// A copy: pip runs the backend in the source directory, which must stay clean.
	work := filepath.Join(t.TempDir(), "python")
	if out, err := exec.Command("cp", "-r", src, work).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	pip := exec.Command(sandbox.GuestPython, "-m", "pip", "install", "--no-deps", "--no-index",
		"--disable-pip-version-check", "--target", target, work)
	out, err := pip.CombinedOutput()
	testenv.Need(t, err == nil || !strings.Contains(string(out), "No module named pip"), "pip for python3.11 (apt-get install python3-pip)")
	if err != nil {
		t.Fatalf("pip install: %v\n%s", err, out)
	}
	cmd := exec.Command(sandbox.GuestPython, "-m", "unittest", "discover", "-v", "-s", filepath.Join(work, "tests"))
	cmd.Dir = t.TempDir() // the installed package, not the source tree, is imported
	cmd.Env = append(os.Environ(), "APYSUP_SERVER=unix:"+ls.socket, "PYTHONPATH="+target, "PYTHONDONTWRITEBYTECODE=1")
	out, err = cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		t.Fatalf("the Python client's tests: %v", err)
	}
	if !strings.Contains(string(out), "Ran 10 tests") {
		t.Fatal("the Python client's tests did not all run")
	}
}
