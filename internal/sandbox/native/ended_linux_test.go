package native

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

func TestParseEnded(t *testing.T) {
	for in, want := range map[string]int{"0": 0, "7": 7, "42": 42, "255": 255} {
		if got, ok := parseEnded([]byte(in)); !ok || got != want {
			t.Errorf("parseEnded(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "256", "-1", "+1", "07", "00", "1 ", " 1", "1\n", "x", "1000", "0x1", "\x00"} {
		if got, ok := parseEnded([]byte(in)); ok {
			t.Errorf("parseEnded(%q) = %d, want refused", in, got)
		}
	}
}

// event is one inotify event as read(2) returns it, its name padded.
func event(mask uint32, name string, pad int) []byte {
	b := make([]byte, unix.SizeofInotifyEvent)
	binary.NativeEndian.PutUint32(b[4:], mask)
	binary.NativeEndian.PutUint32(b[12:], uint32(len(name)+pad))
	return append(append(b, name...), make([]byte, pad)...)
}

func TestNamesEnded(t *testing.T) {
	other := event(unix.IN_CLOSE_WRITE, "outcome.json", 4)
	for _, c := range []struct {
		name   string
		events []byte
		want   bool
	}{
		{"alone", event(unix.IN_CLOSE_WRITE, sandbox.EndedFile, 3), true},
		{"after another", append(other, event(unix.IN_CLOSE_WRITE, sandbox.EndedFile, 10)...), true},
		{"other names", append(other, event(unix.IN_CLOSE_WRITE, sandbox.EndedFile+"x", 2)...), false},
		{"not a write", event(unix.IN_CREATE, sandbox.EndedFile, 3), false},
		{"name past the end", event(unix.IN_CLOSE_WRITE, sandbox.EndedFile, 3)[:unix.SizeofInotifyEvent+2], false},
		{"a header cut", event(unix.IN_CLOSE_WRITE, sandbox.EndedFile, 3)[:10], false},
		{"none", nil, false},
	} {
		if got := namesEnded(c.events); got != c.want {
			t.Errorf("%s: namesEnded = %v, want %v", c.name, got, c.want)
		}
	}
}

func FuzzNamesEnded(f *testing.F) {
	f.Add(event(unix.IN_CLOSE_WRITE, sandbox.EndedFile, 3))
	f.Add(append(event(unix.IN_CLOSE_WRITE, "a", 3), event(unix.IN_CLOSE_WRITE, sandbox.EndedFile, 0)...))
	f.Fuzz(func(t *testing.T, b []byte) {
		namesEnded(b) // guest-named events: never a panic, never a read past b
	})
}

func FuzzParseEnded(f *testing.F) {
	for _, s := range []string{"0", "255", "256", "007", "x"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		code, ok := parseEnded(b)
		if ok && (code < 0 || code > 255 || strconv.Itoa(code) != string(b)) {
			t.Fatalf("parseEnded(%q) = %d", b, code)
		}
	})
}

// watchedEnd waits for w to end and returns what it reported.
func watchedEnd(t *testing.T, w *endWatch) (int, bool) {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
		t.Fatal("the watch did not end")
	}
	select {
	case code := <-w.code:
		return code, true
	default:
		return 0, false
	}
}

// The watch reads the first closed write of EndedFile: other files do not
// end it, and a report it cannot parse, or anything but a regular file,
// ends it without a report.
func TestWatchEnd(t *testing.T) {
	write := func(path, text string) {
		t.Helper()
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name   string
		make   func(dir string)
		code   int
		report bool
	}{
		{"report", func(dir string) {
			write(filepath.Join(dir, "outcome.json"), "{}")
			write(filepath.Join(dir, sandbox.EndedFile), "7")
		}, 7, true},
		{"malformed", func(dir string) { write(filepath.Join(dir, sandbox.EndedFile), "7\n") }, 0, false},
		{"too large", func(dir string) { write(filepath.Join(dir, sandbox.EndedFile), "123456789012") }, 0, false},
		{"a link", func(dir string) {
			target := filepath.Join(dir, "target")
			write(target, "3")
			if err := os.Symlink(target, filepath.Join(dir, sandbox.EndedFile)); err != nil {
				t.Fatal(err)
			}
			write(filepath.Join(dir, sandbox.EndedFile), "4") // through the link: a write of target
		}, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			w, err := watchEnd(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer w.close()
			c.make(dir)
			if c.name == "a link" {
				// No closed write named EndedFile: the watch goes on until closed.
				write(filepath.Join(dir, "later"), "x")
				w.close()
			}
			code, ok := watchedEnd(t, w)
			if ok != c.report || code != c.code {
				t.Fatalf("report %d, %v; want %d, %v", code, ok, c.code, c.report)
			}
		})
	}
}

// The runner's report ends a native run: a script that writes it and
// goes on sleeping ends with the status it reported, its output so far,
// and no process left, long before its timeout. A report the host cannot
// parse is ignored: the run ends when the script does, with its own exit
// status. A child the script forked that ends through the runner does
// not report.
func TestRunnerReportsItsEnd(t *testing.T) {
	b := testBackend(t)
	for _, c := range []struct {
		name, script string
		status       sandbox.Status
		exit         int
		stdout       string
	}{
		{"forged early", `
import time
print("before", flush=True)
with open("/run/apysup/out/ended", "w") as f:
    f.write("7")
time.sleep(120)
print("after")
`, sandbox.StatusError, 7, "before\n"},
		{"malformed", `
import sys
with open("/run/apysup/out/ended", "w") as f:
    f.write("seven")
print("done")
sys.exit(3)
`, sandbox.StatusError, 3, "done\n"},
		{"forked child", `
import os, sys
pid = os.fork()
if pid == 0:
    sys.exit(5)  # through the runner's end, in the child
_, status = os.waitpid(pid, 0)
print("parent", os.waitstatus_to_exitcode(status), os.path.exists("/run/apysup/out/ended"))
sys.exit(4)
`, sandbox.StatusError, 4, "parent 5 False\n"},
		// Not a regular file: refused without blocking the host's read.
		{"a fifo", `
import os, sys
os.mkfifo("/run/apysup/out/ended")
fd = os.open("/run/apysup/out/ended", os.O_RDWR)
os.write(fd, b"0")
os.close(fd)
print("after")
sys.exit(6)
`, sandbox.StatusError, 6, "after\n"},
		// A link is never followed: writes through it are the target's.
		{"a link", `
import os, sys
os.symlink("/run/apysup/out/target", "/run/apysup/out/ended")
with open("/run/apysup/out/ended", "w") as f:
    f.write("0")
print("after")
sys.exit(9)
`, sandbox.StatusError, 9, "after\n"},
		// Past inotify's queue (16,384 events): the report may be lost in
		// the overflow, never the run.
		{"an event flood", `
for _ in range(40000):
    with open("/run/apysup/out/x", "w") as f:
        f.write("1")
print("after")
`, sandbox.StatusOK, 0, "after\n"},
		// The runner reports with its descriptors closed; a process the
		// script left holds stdout until the host kills the sandbox.
		{"output held by a process left behind", `
import subprocess
subprocess.Popen(["/bin/sh", "-c", "sleep 120"])
print("x" * 100000)
`, sandbox.StatusOK, 0, strings.Repeat("x", 100000) + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := run(t, b, c.script, sandbox.Limits{Timeout: 60 * time.Second})
			if out.Status != c.status || out.ExitCode != c.exit || string(out.Stdout) != c.stdout {
				t.Fatalf("status %s exit %d stdout %.80q stderr %q", out.Status, out.ExitCode, out.Stdout, out.Stderr)
			}
		})
	}
}

// Wait on a sandbox whose runner reported its end leaves pid 1 and the
// watch to the teardown, which reaps and closes them: nothing of the guest
// or of its run is left after Release.
func TestReportedEndIsReaped(t *testing.T) {
	b := testBackend(t)
	s, err := b.Prepare(context.Background(), sandbox.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	// The script reports for itself, then sleeps: the report, not pid 1's
	// exit, ends Wait, however loaded the host.
	script := "print('ok', flush=True)\nopen('/run/apysup/out/ended', 'w').write('0')\nimport time\ntime.sleep(120)\n"
	if err := s.Assign(newJob(t, script)); err != nil {
		t.Fatal(err)
	}
	out, err := s.Wait(context.Background())
	if err != nil || out.Status != sandbox.StatusOK || string(out.Stdout) != "ok\n" {
		t.Fatalf("Wait: %v %+v", err, out)
	}
	if s.pending == nil {
		t.Fatal("the run ended without the runner's report")
	}
	// The watch outlives Wait: closing an inotify instance waits for an
	// SRCU grace period, which Release pays, off the result's path.
	watch := s.ended
	if watch == nil || watch.f.Fd() == ^uintptr(0) {
		t.Fatal("Wait closed the watch")
	}
	pid, err := s.process.Pid()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(); err != nil {
		t.Fatal(err)
	}
	if !s.reaped || s.pending != nil {
		t.Fatalf("Release left pid 1 unreaped (reaped %v)", s.reaped)
	}
	if s.ended != nil || watch.f.Fd() != ^uintptr(0) {
		t.Fatal("Release left the watch open")
	}
	if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
		t.Fatalf("pid 1 (host pid %d) after Release: %v", pid, err)
	}
}
