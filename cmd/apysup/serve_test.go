package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/serve"
)

// startServe starts `apysup serve` (this test binary as the command) on
// a socket in a short temp dir and returns it once it serves.
func startServe(t testing.TB, extra ...string) (cmd *exec.Cmd, socket, state string) {
	t.Helper()
	return startServeAt(t, shortTempDir(t), extra...)
}

// shortTempDir is a temp dir with a path short enough for a socket in it,
// removed at cleanup.
func shortTempDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "as-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// startServeAt starts `apysup serve` with its socket and state in dir.
func startServeAt(t testing.TB, dir string, extra ...string) (cmd *exec.Cmd, socket, state string) {
	t.Helper()
	cmd, socket, state, _, lines := launchServe(t, dir, extra...)
	go func() {
		for lines.Scan() {
			t.Log("serve:", lines.Text())
		}
	}()
	return cmd, socket, state
}

// launchServe starts `apysup serve` with its socket and state in dir and
// returns once it serves, with its stderr, whose lines past the first
// the caller reads (or not).
func launchServe(t testing.TB, dir string, extra ...string) (cmd *exec.Cmd, socket, state string, stderr io.ReadCloser, lines *bufio.Scanner) {
	t.Helper()
	needNative(t)
	socket, state = filepath.Join(dir, "api.sock"), filepath.Join(dir, "state")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd = exec.Command(self, append([]string{"serve", "--listen", "unix:" + socket, "--state", state}, extra...)...)
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	stderr, err = cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Drained, not killed: a killed server leaves its state (the native
		// backend's bind-mounted state directory) to the next server, and
		// a test has none.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	lines = bufio.NewScanner(stderr)
	for lines.Scan() {
		if strings.Contains(lines.Text(), "serving on unix:") {
			return cmd, socket, state, stderr, lines
		}
		t.Log("serve:", lines.Text())
	}
	t.Fatal("apysup serve ended before it served")
	return nil, "", "", nil, nil
}

// TestServeOutlivesItsLogReader: a server whose stderr reader has gone
// (`apysup serve 2>&1 | tee serve.log`, and tee ends) goes on serving,
// and its next log line, here the last one after SIGTERM's drain, does
// not end it by SIGPIPE: it exits 0 and leaves nothing.
func TestServeOutlivesItsLogReader(t *testing.T) {
	cmd, socket, state, stderr, _ := launchServe(t, shortTempDir(t))
	if err := stderr.Close(); err != nil {
		t.Fatal(err)
	}
	client, err := serve.NewClient("unix:"+socket, "")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	res, err := client.Run(context.Background(), serve.RunRequest{Source: "print('served')"})
	if err != nil {
		t.Fatalf("a run after the log reader left: %v", err)
	}
	if res.Status != "ok" || res.Stdout != "served\n" {
		t.Fatalf("a run after the log reader left: %s %q %q", res.Status, res.Stdout, res.Error)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("apysup serve: %v, want exit 0", err)
	}
	for _, left := range serveLeftovers(cmd.Process.Pid, state, socket) {
		t.Error(left)
	}
}

// TestServeDrainsOnSIGTERM: SIGTERM lets a run in flight finish, cancels
// one that outlives the grace period, destroys the pool, exits 0, and
// leaves no process, cgroup, mount, socket or state directory.
func TestServeDrainsOnSIGTERM(t *testing.T) {
	cmd, socket, state := startServe(t, "--pool", "1", "--grace", "8s")
	client, err := serve.NewClient("unix:"+socket, "")
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	ctx := context.Background()
	short, err := client.Start(ctx, serve.RunRequest{Source: "import time\ntime.sleep(0.5)\nprint('finished')"})
	if err != nil {
		t.Fatal(err)
	}
	long, err := client.Start(ctx, serve.RunRequest{Source: "import time\ntime.sleep(300)"})
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]chan serve.RunResult{}
	for _, id := range []string{short, long} {
		ch := make(chan serve.RunResult, 1)
		results[id] = ch
		running := make(chan struct{})
		go func() {
			var res serve.RunResult
			for ev, err := range client.Events(ctx, id) {
				if err != nil {
					break
				}
				switch ev.Name {
				case serve.EventState:
					close(running)
				case serve.EventResult:
					json.Unmarshal(ev.Data, &res)
				}
			}
			ch <- res
		}()
		<-running
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if res := <-results[short]; res.Status != "ok" || res.Stdout != "finished\n" {
		t.Errorf("the run in flight did not finish: %s %q", res.Status, res.Error)
	}
	if res := <-results[long]; res.Status != "killed" {
		t.Errorf("the run past the grace period: %s, want killed", res.Status)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("apysup serve: %v, want exit 0", err)
	}
	for _, left := range serveLeftovers(cmd.Process.Pid, state, socket) {
		t.Error(left)
	}
}

// serveLeftovers lists what a server that exited left: its state
// directory or socket, a process or mount under the state directory, a
// cgroup of its containers (apysup-<pid>-<n>).
func serveLeftovers(pid int, state, socket string) []string {
	var out []string
	for _, p := range []string{state, socket} {
		if _, err := os.Lstat(p); err == nil {
			var names []string
			entries, _ := os.ReadDir(p)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			out = append(out, fmt.Sprintf("left behind: %s %v", p, names))
		}
	}
	procs, _ := os.ReadDir("/proc")
	ours := fmt.Sprintf("apysup-%d-", pid)
	for _, p := range procs {
		cg, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cgroup"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "cmdline"))
		if strings.Contains(string(cg), ours) || strings.Contains(string(cmdline), state) {
			out = append(out, fmt.Sprintf("process %s: %q", p.Name(), cmdline))
		}
	}
	if mi, err := os.ReadFile("/proc/self/mountinfo"); err == nil && strings.Contains(string(mi), state) {
		out = append(out, "a mount under "+state)
	}
	for _, cg := range cgroupsNamed(ours) {
		out = append(out, "cgroup: "+cg)
	}
	return out
}

// cgroupsNamed lists the cgroups (v1 and v2) whose name starts with prefix.
func cgroupsNamed(prefix string) []string {
	var out []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil || !d.IsDir():
			return nil
		case strings.HasPrefix(d.Name(), prefix):
			out = append(out, p)
			return fs.SkipDir
		case strings.Count(p, "/") > 8:
			return fs.SkipDir
		}
		return nil
	})
	return out
}

// TestRunWithServerIsTheSameRun: `apysup run --server` takes the same
// flags and gives the same RunResult document and exit status as a local
// run.
func TestRunWithServerIsTheSameRun(t *testing.T) {
	_, socket, _ := startServe(t)
	// The script is named as a local run names it: its sys.argv[0],
	// __file__ and tracebacks agree.
	src := "import sys\nprint('out', sys.argv, __file__)\nsys.exit(7)"
	file := filepath.Join(t.TempDir(), "tool.py")
	os.WriteFile(file, []byte(src), 0o600)
	// The workspace travels as a tar: empty directories and modes too.
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "in.txt"), []byte("x"), 0o600)
	os.MkdirAll(filepath.Join(ws, "empty"), 0o755)
	os.MkdirAll(filepath.Join(ws, "bin"), 0o700)
	os.WriteFile(filepath.Join(ws, "bin", "tool"), []byte("#!/bin/sh\n"), 0o755)
	listing := "import os\nfor d, ds, fs in sorted(os.walk('/workspace')):\n" +
		"    print(d, sorted(ds), [(f, oct(os.stat(os.path.join(d, f)).st_mode)) for f in sorted(fs)])\n" +
		"open('/workspace/new.txt', 'w').write('y')"
	export := filepath.Join(t.TempDir(), "out")
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"--json", "--timeout", "20s", "-c", src, "a"}, 7},
		{[]string{"--json", file, "a"}, 7},
		{[]string{"--json", "-c", "1/0"}, 1},
		{[]string{"--json", "--plan", "../../examples/plan.json", "-c", "import weather\nprint(weather.get(city='Paris'))"}, 0},
		{[]string{"--json", "--workspace", ws, "--export", export, "-c", listing}, 0},
		{[]string{"--timeout", "1s", "-c", "import time\ntime.sleep(30)"}, ExitTimeout},
	} {
		local, _, localCode := run(t, append([]string{"run"}, c.args...)...)
		os.RemoveAll(export)
		remote, errOut, remoteCode := run(t, append([]string{"run", "--server", "unix:" + socket}, c.args...)...)
		if slices.Contains(c.args, "--export") {
			if data, err := os.ReadFile(filepath.Join(export, "new.txt")); err != nil || string(data) != "y" {
				t.Errorf("export with --server: %v %q", err, data)
			}
		}
		if localCode != c.code || remoteCode != c.code {
			t.Errorf("%v: exit %d local, %d with --server, want %d (%s)", c.args, localCode, remoteCode, c.code, errOut)
		}
		if c.args[0] != "--json" {
			continue
		}
		var l, r map[string]any
		if err := json.Unmarshal([]byte(local), &l); err != nil {
			t.Fatalf("local: %v %s", err, local)
		}
		if err := json.Unmarshal([]byte(remote), &r); err != nil {
			t.Fatalf("remote: %v %s", err, remote)
		}
		for _, k := range []string{"schema_version", "status", "exit_code", "stdout", "stderr", "plan_sha256", "backend"} {
			if fmt.Sprint(l[k]) != fmt.Sprint(r[k]) {
				t.Errorf("%v: %s differs: local %v, --server %v", c.args, k, l[k], r[k])
			}
		}
		if fmt.Sprint(keys(l)) != fmt.Sprint(keys(r)) {
			t.Errorf("%v: the documents' fields differ:\nlocal  %v\nserver %v", c.args, keys(l), keys(r))
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// A listener that cannot open (a token file others may read) refuses the
// serve before anything is announced or made: "serving on" was printed
// for the Unix socket first, the process then exited 2, and the native
// backend's mounts under --state stayed.
func TestServeRefusesBeforeItAnnounces(t *testing.T) {
	needNative(t)
	dir := shortTempDir(t)
	token := filepath.Join(dir, "token")
	if err := os.WriteFile(token, []byte("0123456789abcdef0123456789abcdef\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "serve", "--listen", "unix:"+filepath.Join(dir, "api.sock"), "--listen", "tcp:127.0.0.1:0",
		"--token-file", token, "--state", filepath.Join(dir, "state"))
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != ExitUsage {
		t.Fatalf("exit %v, want %d\n%s", err, ExitUsage, out)
	}
	if strings.Contains(string(out), "serving on") || !strings.Contains(string(out), "lets others read it") {
		t.Fatalf("output:\n%s", out)
	}
	// Nothing was made: the server's state (the native backend's mounts
	// under it) stayed behind when the refusal came after the server.
	if _, err := os.Stat(filepath.Join(dir, "state")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused serve made its state directory: %v", err)
	}
}
