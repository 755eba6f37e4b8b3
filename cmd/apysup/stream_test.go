package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/testenv"
)

// TestBinaryStreamsGuestOutput runs the command as a user would, on each
// backend: the guest's first lines reach the command's stdout and stderr
// while the guest still sleeps (the test reads them, then interrupts the
// command: a run that ends killed, not by its timeout, streamed them), and
// the summary follows.
func TestBinaryStreamsGuestOutput(t *testing.T) {
	s := script(t, testenv.StreamingScript)
	for _, backend := range []string{"native", "wazero"} {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			cmd, stdout, stderr := startRun(t, nil, "--backend", backend, "--timeout", "60s", s)
			outLines, errLines := bufio.NewReader(stdout), bufio.NewReader(stderr)
			if line, err := outLines.ReadString('\n'); line != "first\n" {
				t.Fatalf("first stdout line %q (%v)", line, err)
			}
			if line := readUntil(t, errLines, "warn\n"); line != "warn\n" {
				t.Fatalf("stderr %q", line)
			}
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			rest, _ := io.ReadAll(outLines)
			io.Copy(io.Discard, errLines)
			err := cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != ExitKilled || !strings.HasPrefix(string(rest), "──\nstatus    killed (canceled)") {
				t.Fatalf("%v; the rest of stdout:\n%s", err, rest)
			}
		})
	}
}

// startRun starts `apysup run ARGS` as a user would, with env added to the
// test's own, and hands back its stdout and stderr; the process is killed
// at the test's end if it is still running.
func startRun(t *testing.T, env []string, args ...string) (*exec.Cmd, io.ReadCloser, io.ReadCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"run"}, args...)...)
	cmd.Env = append(append(os.Environ(), cliEnv+"=1"), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() }) // a no-op once it exited
	return cmd, stdout, stderr
}

// readUntil reads lines until want (skipping a progress note before it).
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	for {
		line, err := r.ReadString('\n')
		if line == want || err != nil {
			return line
		}
	}
}

// needBackend stops a test unless backend can run here.
func needBackend(t *testing.T, backend string) {
	t.Helper()
	if backend == "native" {
		needNative(t)
		return
	}
	res, _, _ := runJSON(t, "--backend", backend, script(t, "pass\n"))
	testenv.Need(t, res.ErrorCode != "wasi_guest_missing", "the WASI CPython build (make wasi-python)")
}

// TestRunShowsOutputAndTraceback: without --json the guest's stdout and
// stderr go to the command's own, then the summary; an uncaught
// exception's traceback is shown once (on stderr, where Python writes it,
// or in the summary when the script silenced it). With --json stdout is
// the RunResult alone and stderr holds none of the guest's output.
func TestRunShowsOutputAndTraceback(t *testing.T) {
	for _, backend := range []string{"native", "wazero"} {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			s := script(t, "import sys\nprint('out')\nprint('err', file=sys.stderr)\ndef f():\n    raise ValueError('nope')\nf()\n")
			out, errOut, code := run(t, "run", "--backend", backend, s)
			const tbLine = "in f\n    raise ValueError('nope')\nValueError: nope\n"
			if code != 1 || !strings.HasPrefix(out, "out\n──\nstatus    error") || !strings.Contains(out, "exception ValueError: nope") ||
				strings.Contains(out, "Traceback") || !strings.Contains(errOut, "err\nTraceback (most recent call last):\n") ||
				strings.Count(errOut, tbLine) != 1 {
				t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
			}
			silenced := script(t, "import sys\nsys.excepthook = lambda *a: None\ndef f():\n    raise ValueError('nope')\nf()\n")
			out, errOut, _ = run(t, "run", "--backend", backend, silenced)
			if !strings.Contains(out, "traceback\n          Traceback (most recent call last):\n") || !strings.Contains(out, "          ValueError: nope\n") || strings.Contains(errOut, "Traceback") {
				t.Fatalf("silenced excepthook:\nstdout:\n%s\nstderr:\n%s", out, errOut)
			}
			out, errOut, _ = run(t, "run", "--json", "--backend", backend, s)
			var res supervisor.Result
			if err := json.Unmarshal([]byte(out), &res); err != nil || res.Stdout != "out\n" || strings.Contains(errOut, "err\n") {
				t.Fatalf("--json: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
			}
		})
	}
}

// TestBrokenPipeTearsTheRunDown: a reader that leaves after the first line
// (`apysup run s.py | head -1`) ends the command as it ends any writer, by
// SIGPIPE, but only after the run is cancelled and torn down: nothing of
// it stays in the command's temporary directory, mounted or not.
func TestBrokenPipeTearsTheRunDown(t *testing.T) {
	s := script(t, "import time\nfor i in range(3000):\n    print('line', i, flush=True)\n    time.sleep(0.1)\n")
	for _, backend := range []string{"native", "wazero"} {
		t.Run(backend, func(t *testing.T) {
			needBackend(t, backend)
			tmp := shortTempDir(t)
			cmd, stdout, _ := startRun(t, []string{"TMPDIR=" + tmp}, "--backend", backend, "--timeout", "60s", s)
			if line, err := bufio.NewReader(stdout).ReadString('\n'); line != "line 0\n" {
				t.Fatalf("first stdout line %q (%v)", line, err)
			}
			stdout.Close() // the reader leaves; the guest prints on
			endedByBrokenPipe(t, cmd, tmp)
		})
	}
}

// TestBrokenPipeAfterJSONRun: with --json the run prints nothing until its
// RunResult, which finds the reader gone: the command ends by SIGPIPE
// there too, not by an error status of its own, and leaves nothing.
func TestBrokenPipeAfterJSONRun(t *testing.T) {
	needNative(t)
	tmp := shortTempDir(t)
	cmd, stdout, _ := startRun(t, []string{"TMPDIR=" + tmp}, "--json", "-c", "print('hi')")
	stdout.Close() // the reader leaves before the run ends
	endedByBrokenPipe(t, cmd, tmp)
}

// endedByBrokenPipe waits for cmd, which must end by SIGPIPE, and checks
// that nothing of its run stays in tmp, its TMPDIR, mounted or not.
func endedByBrokenPipe(t *testing.T, cmd *exec.Cmd, tmp string) {
	t.Helper()
	err := cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the command ended %v, want SIGPIPE", err)
	}
	if ws := exit.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != syscall.SIGPIPE {
		t.Fatalf("the command ended %v, want SIGPIPE", err)
	}
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(mounts), tmp) {
		t.Errorf("mounts left under %s:\n%s", tmp, mounts)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		t.Errorf("left behind: %s", e.Name())
	}
}
