package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/apysup/apysup/python"
)

func TestScriptNameAndArgv(t *testing.T) {
	j := Job{ScriptPath: "/host/dir/main.py", Args: []string{"a b", "", "--", "é"}}
	name, err := j.ScriptName()
	if err != nil || name != "main.py" {
		t.Fatalf("%q %v", name, err)
	}
	b, err := j.ArgvFileData()
	if err != nil {
		t.Fatal(err)
	}
	if want := GuestJobDir + "/main.py\x00a b\x00\x00--\x00é\x00"; string(b) != want {
		t.Errorf("argv file %q, want %q", b, want)
	}
	if _, err := (Job{ScriptPath: "/x/main.py", Args: []string{"ok", "a\x00b"}}).ArgvFileData(); err == nil {
		t.Error("an argument with a NUL byte was accepted")
	}
	for _, bad := range []string{"", "/x/prelude.py", "/x/.argv", "/x/.hidden.py"} {
		j := Job{ScriptPath: bad}
		if _, err := j.ScriptName(); err == nil {
			t.Errorf("%q accepted", bad)
		}
		if _, err := j.ArgvFileData(); err == nil {
			t.Errorf("%q accepted by ArgvFileData", bad)
		}
	}
}

func TestReadScript(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "main.py")
	if err := os.WriteFile(path, []byte("print(1)\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.py")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, link} {
		if b, err := (Job{ScriptPath: p}).ReadScript(); err != nil || string(b) != "print(1)\n" {
			t.Errorf("%s: %q %v", p, b, err)
		}
	}
	big := filepath.Join(dir, "big.py")
	if err := os.WriteFile(big, make([]byte, MaxScriptBytes+1), 0o600); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.py")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{big, fifo, dir, "/dev/zero", filepath.Join(dir, "missing.py")} {
		if _, err := (Job{ScriptPath: p}).ReadScript(); err == nil {
			t.Errorf("%s accepted", p)
		}
	}
	// A script held in memory: nothing is read from the path, which only
	// names it; the size bound holds.
	held := Job{ScriptPath: "calc.py", Source: []byte("print(2)\n")}
	if b, err := held.ReadScript(); err != nil || string(b) != "print(2)\n" {
		t.Errorf("Source: %q %v", b, err)
	}
	if name, err := held.ScriptName(); err != nil || name != "calc.py" {
		t.Errorf("ScriptName with Source: %q %v", name, err)
	}
	if _, err := (Job{ScriptPath: path, Source: make([]byte, MaxScriptBytes+1)}).ReadScript(); err == nil {
		t.Error("an oversized Source accepted")
	}
}

// The command line names the runner's files and no script, so that a
// sandbox can start before its job is known.
func TestRunnerArgv(t *testing.T) {
	argv := RunnerArgv()
	if argv[0] != GuestPython || !slices.Contains(argv, GuestRunner) || !slices.Contains(argv, GuestJobDir+"/"+ArgvFile) ||
		slices.Contains(argv, "--") {
		t.Errorf("argv %q", argv)
	}
}

// The runner writes its end's report under the name the native backend
// watches for.
func TestRunnerNamesEndedFile(t *testing.T) {
	src, err := fs.ReadFile(python.GuestFiles, python.Runner)
	if err != nil {
		t.Fatal(err)
	}
	if want := "\nENDED = \"" + EndedFile + "\""; !strings.Contains(string(src), want) {
		t.Fatalf("%s does not define %s", python.Runner, strings.TrimSpace(want))
	}
}
