package apysup_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup"
	"github.com/apysup/apysup/internal/sandbox/doctor"
	"github.com/apysup/apysup/internal/testenv"
)

// The examples run real native guests and cannot skip: on a machine that
// cannot run them (not root, no user namespaces, ...) and outside CI
// (APYSUP_REQUIRE_ALL=1) only the tests run, and those skip saying why.
func TestMain(m *testing.M) {
	apysup.Init()
	flag.Parse()
	if reason := cannotRunNative(); reason != "" && !testenv.RequireAll() && flag.Lookup("test.run").Value.String() == "" {
		println("apysup: the examples need the native backend, skipped:", reason)
		_ = flag.Set("test.run", "^Test")
	}
	os.Exit(m.Run())
}

func cannotRunNative() string {
	if os.Geteuid() != 0 {
		return "not root"
	}
	if f := doctor.Quick().FirstFailure(); f != nil {
		return f.Name + ": " + f.Detail
	}
	return ""
}

func needNative(t *testing.T) {
	t.Helper()
	reason := cannotRunNative()
	testenv.Need(t, reason == "", "the native backend: "+reason)
}

func TestRunRequestErrors(t *testing.T) {
	for _, req := range []apysup.Request{{}, {Source: []byte("pass"), ScriptPath: "x.py"}} {
		if _, err := apysup.Run(context.Background(), req); err == nil {
			t.Errorf("%+v: no error", req)
		}
	}
}

// A run's script given as bytes leaves no file behind; a ScriptPath is
// left alone; a refused backend is a Result, never a fallback.
func TestRunSourceAndPath(t *testing.T) {
	needNative(t)
	tmp, err := os.MkdirTemp("/tmp", "a") // short: the run's socket path lives under TMPDIR too
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	t.Setenv("TMPDIR", tmp)
	res, err := apysup.Run(context.Background(), apysup.Request{Source: []byte("import sys\nprint(sys.argv[1:])"), Args: []string{"a", "b"}})
	if err != nil || res.Status != "ok" || res.Stdout != "['a', 'b']\n" || res.BackendSource != "default" || len(res.Events) == 0 {
		t.Fatalf("Source: %v %+v", err, res)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "apysup-script-*")); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	script := filepath.Join(t.TempDir(), "s.py")
	if err := os.WriteFile(script, []byte("print('path')"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = apysup.Run(context.Background(), apysup.Request{ScriptPath: script, Backend: apysup.BackendNative})
	if err != nil || res.Status != "ok" || res.Stdout != "path\n" || res.BackendSource != "request" {
		t.Fatalf("ScriptPath: %v %+v", err, res)
	}
	if _, err := os.Stat(script); err != nil {
		t.Errorf("the caller's script: %v", err)
	}
	res, err = apysup.Run(context.Background(), apysup.Request{Source: []byte("pass"), Backend: "qemu"})
	if err != nil || res.Status != "refused" || res.ErrorCode != "unknown_backend" {
		t.Fatalf("unknown backend: %v %+v", err, res)
	}
}

// The acceptance: a five-line program using apysup.Init and
// apysup.Run builds against a local checkout with a replace directive and
// prints ok and 42.
const fiveLines = `package main

import ("context"; "fmt"; "github.com/apysup/apysup")

func main() {
	apysup.Init()
	res, err := apysup.Run(context.Background(), apysup.Request{Source: []byte("print(6*7)")})
	fmt.Println(res.Status, res.Stdout, err)
}
`

func TestFiveLineProgram(t *testing.T) {
	needNative(t)
	if testing.Short() {
		t.Skip("builds a program")
	}
	bin := testenv.BuildProgram(t, fiveLines, "-tags", "seccomp")
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || string(out) != "ok 42\n <nil>\n" {
		t.Fatalf("%v: %q, want %q", err, out, "ok 42\n <nil>\n")
	}
}

// TestRunOutput: Request.Output receives the guest's lines while it runs,
// on both backends (the recorder cancels the run once they arrived, so a
// run that ends killed got them first), and adds up to the Result's
// Stdout and Stderr, which are the same as without an Output.
func TestRunOutput(t *testing.T) {
	for _, backend := range []string{apysup.BackendNative, apysup.BackendWazero} {
		t.Run(backend, func(t *testing.T) {
			if backend == apysup.BackendNative {
				needNative(t)
			}
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			rec := testenv.NewStreamRecorder(cancel)
			res, err := apysup.Run(ctx, apysup.Request{Source: []byte(testenv.StreamingScript), Backend: backend, Output: rec.Output})
			testenv.Need(t, res.ErrorCode != "wasi_guest_missing", "the WASI CPython build (make wasi-python)")
			stdout, stderr := rec.Got()
			if err != nil || res.Status != "killed" || res.ErrorCode != "canceled" {
				t.Fatalf("%v: status %s (%s), delivered %q %q: the lines did not arrive while the guest ran", err, res.Status, res.ErrorCode, stdout, stderr)
			}
			if stdout != "first\n" || stderr != "warn\n" || res.Stdout != stdout || res.Stderr != stderr {
				t.Fatalf("delivered %q %q, result %q %q", stdout, stderr, res.Stdout, res.Stderr)
			}
			const script = "import sys\nprint('a')\nsys.stderr.write('b\\n')\nprint('c' * 100)\nraise SystemExit(3)\n"
			var got [2]strings.Builder
			with, err := apysup.Run(t.Context(), apysup.Request{Source: []byte(script), Backend: backend, Limits: apysup.Limits{OutputBytes: 50},
				Output: func(stream string, chunk []byte) { got[map[string]int{"stdout": 0, "stderr": 1}[stream]].Write(chunk) }})
			if err != nil {
				t.Fatal(err)
			}
			without, err := apysup.Run(t.Context(), apysup.Request{Source: []byte(script), Backend: backend, Limits: apysup.Limits{OutputBytes: 50}})
			if err != nil {
				t.Fatal(err)
			}
			if got[0].String() != with.Stdout || got[1].String() != with.Stderr || with.Stdout != without.Stdout || with.Stderr != without.Stderr ||
				len(with.Stdout) != 50 || !with.StdoutTruncated || with.Status != without.Status || with.ExitCode != 3 {
				t.Fatalf("delivered %q %q; with an Output %+v; without %+v", got[0].String(), got[1].String(), with, without)
			}
			// Lines leave the guest as printed only when someone streams them.
			for _, output := range []func(string, []byte){nil, func(string, []byte) {}} {
				res, err := apysup.Run(t.Context(), apysup.Request{Source: []byte("import sys\nprint(sys.stdout.line_buffering)\n"), Backend: backend, Output: output})
				if want := map[bool]string{false: "False\n", true: "True\n"}[output != nil]; err != nil || res.Stdout != want {
					t.Fatalf("line buffering %v %q, want %q", err, res.Stdout, want)
				}
			}
		})
	}
}
