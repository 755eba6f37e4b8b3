package python

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/testenv"
)

const hostPython = "/usr/bin/python3.11"

func needPython(t *testing.T) {
	t.Helper()
	_, err := os.Stat(hostPython)
	testenv.Need(t, err == nil, hostPython+" (apt-get install python3.11)")
}

// installGuest writes GuestFiles to a fresh directory, as a backend would.
func installGuest(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "opt")
	if err := os.CopyFS(dir, GuestFiles); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestGuestFiles(t *testing.T) {
	want := []string{"_agent_runtime_host.py", "_agent_runtime_wire.py", "agent_runtime.py", "apysup_runner.py"}
	got, err := fs.Glob(GuestFiles, "*")
	if err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("guest files %v (%v), want %v", got, err, want)
	}
	for _, name := range want {
		disk, err := os.ReadFile(filepath.Join("guest", name))
		if err != nil {
			t.Fatal(err)
		}
		embedded, err := fs.ReadFile(GuestFiles, name)
		if err != nil || !bytes.Equal(disk, embedded) {
			t.Fatalf("%s: embedded bytes differ from guest/%s", name, name)
		}
	}
}

// The guest modules' own unit tests (testdata/test_guest.py).
func TestGuestPythonUnits(t *testing.T) {
	needPython(t)
	cmd := exec.Command(hostPython, "-I", "-S", "testdata/test_guest.py", installGuest(t))
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// The guest's canonical encoding and the host's (internal/canonjson) give
// the same bytes, so a result digested on either side agrees.
func TestGuestCanonicalMatchesHost(t *testing.T) {
	needPython(t)
	docs := []string{
		`{"b":[1,2.5,-0.0,1e21,1e-7,123456789012345680000,5e-324],"a":{"\u20ac":"x","\r":"y","😀":"z","דּ":"w"}}`,
		`[333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001, 9007199254740993]`,
		`"\u0000\u001f\"\\/\u007f\u2028é😀"`,
		`[null,true,false,{},[],""]`,
		`{"nested":{"z":{"y":{"x":[0.1,0.2,0.30000000000000004]}}}}`,
	}
	script := `
import json, sys
sys.path.insert(0, sys.argv[1])
import _agent_runtime_wire as w
for line in sys.stdin.read().splitlines():
    sys.stdout.buffer.write(w.canonical(json.loads(line)) + b"\n")
`
	cmd := exec.Command(hostPython, "-I", "-S", "-c", script, installGuest(t))
	var in bytes.Buffer
	for _, d := range docs {
		var v any
		if err := json.Unmarshal([]byte(d), &v); err != nil {
			t.Fatal(err)
		}
		in.WriteString(strings.ReplaceAll(d, "\n", " ") + "\n")
	}
	cmd.Stdin = &in
	cmd.Env = []string{"LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.Bytes())
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	for i, d := range docs {
		want, err := canonjson.Canonical([]byte(d))
		if err != nil {
			t.Fatal(err)
		}
		if lines[i] != string(want) {
			t.Errorf("doc %d:\nguest %s\nhost  %s", i, lines[i], want)
		}
	}
}
