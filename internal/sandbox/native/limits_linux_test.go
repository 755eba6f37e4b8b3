package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

func TestTimeoutKillsTheTree(t *testing.T) {
	b := testBackend(t)
	// A child spins too: the whole tree must go.
	script := "import os\nif os.fork() == 0:\n    while True: pass\nwhile True: pass\n"
	out := run(t, b, script, sandbox.Limits{Timeout: 2e9})
	if out.Status != sandbox.StatusTimeout {
		t.Fatalf("status %s exit %d stderr %q", out.Status, out.ExitCode, out.Stderr)
	}
	assertClean(t, b)
}

func TestMemoryLimit(t *testing.T) {
	b := testBackend(t)
	out := run(t, b, "b = b'x' * (4 << 30)\nprint(len(b))\n", sandbox.Limits{MemoryBytes: 256 << 20})
	if out.Status != sandbox.StatusMemoryLimit {
		t.Fatalf("status %s exit %d stderr %q", out.Status, out.ExitCode, out.Stderr)
	}
	if out.Usage.PeakMemoryBytes > 256<<20 {
		t.Errorf("peak %d above the limit", out.Usage.PeakMemoryBytes)
	}
	assertClean(t, b)
}

func TestPidsLimit(t *testing.T) {
	b := testBackend(t)
	script := `import os, sys, time
n = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        n += 1
except BlockingIOError:
    print("blocked after", n, flush=True)
    sys.exit(3)
`
	out := run(t, b, script, sandbox.Limits{Pids: 64})
	if out.Status != sandbox.StatusError || out.ExitCode != 3 {
		t.Fatalf("status %s exit %d stdout %q stderr %q", out.Status, out.ExitCode, out.Stdout, out.Stderr)
	}
	var n int
	if _, err := fmtSscanf(string(out.Stdout), "blocked after %d", &n); err != nil || n >= 64 {
		t.Fatalf("stdout %q: the bomb made %d children under pids=64", out.Stdout, n)
	}
	if out.Usage.Pids > 64 {
		t.Errorf("pids peak %d above 64", out.Usage.Pids)
	}
	assertClean(t, b)
}

func TestTmpAndOutAreBounded(t *testing.T) {
	b := testBackend(t)
	for _, dir := range []string{"/tmp", "/run/apysup/out"} {
		t.Run(dir, func(t *testing.T) { fill(t, b, dir) })
	}
}

func fill(t *testing.T, b *Backend, dir string) {
	t.Helper()
	// The file goes again so that the runner can write its outcome.
	script := `import errno, os
try:
    with open('` + dir + `/fill', 'wb') as f:
        for _ in range(64):
            f.write(b'x' * (1 << 20))
    print('wrote everything')
except OSError as e:
    print(errno.errorcode[e.errno])
os.remove('` + dir + `/fill')
`
	out := run(t, b, script, sandbox.Limits{TmpBytes: 4 << 20})
	if out.Status != sandbox.StatusOK || strings.TrimSpace(string(out.Stdout)) != "ENOSPC" {
		t.Fatalf("status %s stdout %q stderr %q", out.Status, out.Stdout, out.Stderr)
	}
}

func TestStdoutFloodIsTruncated(t *testing.T) {
	b := testBackend(t)
	script := "import sys\nchunk = b'x' * (1 << 20)\nfor _ in range(100):\n    sys.stdout.buffer.write(chunk)\nsys.stderr.write('done')\n"
	const limit = 1 << 20
	out := run(t, b, script, sandbox.Limits{OutputBytes: limit})
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %q", out.Status, out.Stderr)
	}
	if len(out.Stdout) != limit || !out.StdoutTruncated {
		t.Errorf("stdout %d bytes truncated=%v, want %d and true", len(out.Stdout), out.StdoutTruncated, limit)
	}
	if cap(out.Stdout) > 2*limit {
		t.Errorf("stdout buffer grew to %d bytes", cap(out.Stdout))
	}
	if string(out.Stderr) != "done" || out.StderrTruncated {
		t.Errorf("stderr %q truncated=%v", out.Stderr, out.StderrTruncated)
	}
}

func TestRlimits(t *testing.T) {
	b := testBackend(t)
	const nofile = `import errno
fs = []
try:
    for _ in range(100):
        fs.append(open('/dev/null'))
    print('opened')
except OSError as e:
    print(errno.errorcode[e.errno])
`
	for _, tc := range []struct {
		name, script, want string
		limits             sandbox.Limits
	}{
		{"fsize", `import errno
try:
    open('/workspace/big', 'wb').write(b'x' * (2 << 20))
    print('wrote')
except OSError as e:
    print(errno.errorcode[e.errno])
`, "EFBIG", sandbox.Limits{FileSizeBytes: 1 << 20}},
		{"nofile", nofile, "EMFILE", sandbox.Limits{OpenFiles: 32}},
		// Held to the end in a reference cycle: released before the outcome
		// is written, as at the end of `python script.py`.
		{"nofile-held", nofile + "def keep():\n    return fs\n", "EMFILE", sandbox.Limits{OpenFiles: 32}},
		{"core", "import resource\nprint(resource.getrlimit(resource.RLIMIT_CORE))\n", "(0, 0)", sandbox.Limits{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := run(t, b, tc.script, tc.limits)
			if got := strings.TrimSpace(string(out.Stdout)); out.Status != sandbox.StatusOK || got != tc.want {
				t.Fatalf("status %s stdout %q (want %q) stderr %q", out.Status, got, tc.want, out.Stderr)
			}
		})
	}
}

// TestCPUsLimit: the CPU quota in cores (apysup run --cpus) is the run's
// cgroup quota, as the kernel reads it back.
func TestCPUsLimit(t *testing.T) {
	b := testBackend(t)
	s, err := b.Prepare(t.Context(), sandbox.Limits{CPUs: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	file, want := filepath.Join(s.cgroupDir("cpu"), "cpu.max"), "50000 100000\n"
	if !s.v2() {
		file, want = filepath.Join(s.cgroupDir("cpu"), "cpu.cfs_quota_us"), "50000\n"
	}
	if got, err := os.ReadFile(file); err != nil || string(got) != want {
		t.Fatalf("%s: %q (%v), want %q", file, got, err, want)
	}
}
