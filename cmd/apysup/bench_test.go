package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// cliEnv makes the test binary act as the apysup command (see TestMain),
// so a benchmark can time whole `apysup run` processes without a build.
const cliEnv = "APYSUP_TEST_AS_CLI"

// bwrapArgs runs the interpreter under bubblewrap with careful flags: new
// namespaces of every kind, only /usr read-only, fresh /proc, /dev, /tmp.
func bwrapArgs(cmd ...string) []string {
	return append([]string{"--unshare-all", "--die-with-parent", "--new-session",
		"--ro-bind", "/usr", "/usr", "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
		"--symlink", "usr/bin", "/bin", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--clearenv", "--"}, cmd...)
}

// BenchmarkStartupSideBySide interleaves, in one run: bare
// `python3.11 -S -c pass`, the same under bwrap, and whole `apysup run`
// processes of an empty script (native, and wazero when built), and
// reports medians, p90s and ratios to the bare run (SPEC.md section 7),
// of wall time and, steadier on a shared machine, of CPU time: the
// process's and its reaped children's (the native guest's container, the
// wazero guest's thread), what issue 17's 150 ms for a cached wazero run
// is measured in.
func BenchmarkStartupSideBySide(b *testing.B) {
	needNative(b)
	bwrap, err := exec.LookPath("bwrap")
	testenv.Need(b, err == nil, "bwrap (apt-get install bubblewrap; make deps installs it)")
	self, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	empty := filepath.Join(b.TempDir(), "empty.py")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		argv []string
	}{
		{"bare", []string{sandbox.GuestPython, "-S", "-c", "pass"}},
		{"bwrap", append([]string{bwrap}, bwrapArgs(sandbox.GuestPython, "-S", "-c", "pass")...)},
		{"apysup-native", []string{self, "run", "--approve", "deny", empty}},
	}
	if out, err := exec.Command(self, "run", "--backend", "wazero", "--approve", "deny", empty).CombinedOutput(); err == nil {
		cases = append(cases, struct {
			name string
			argv []string
		}{"apysup-wazero", []string{self, "run", "--backend", "wazero", "--approve", "deny", empty}})
	} else {
		b.Logf("wazero left out: %v %s", err, out)
	}
	times := make([][]time.Duration, len(cases))
	cpu := make([][]time.Duration, len(cases))
	for b.Loop() {
		for i, c := range cases {
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Env = append(os.Environ(), cliEnv+"=1")
			t0 := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("%s: %v\n%s", c.name, err, out)
			}
			times[i] = append(times[i], time.Since(t0))
			cpu[i] = append(cpu[i], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	names := make([]string, len(cases))
	for i, c := range cases {
		names[i] = c.name
	}
	reportVersusBare(b, names, times)
	cpuNames := make([]string, len(cases))
	for i, c := range cases {
		cpuNames[i] = c.name + "-cpu"
	}
	reportVersusBare(b, cpuNames, cpu)
}

// reportVersusBare reports each case's p50 and p90 in ms and, after the
// first (the bare interpreter), its median as a ratio to the first's.
func reportVersusBare(b *testing.B, names []string, times [][]time.Duration) {
	bare := median(times[0])
	for i, name := range names {
		b.ReportMetric(ms(median(times[i])), name+"-p50-ms")
		b.ReportMetric(ms(percentile(times[i], 0.9)), name+"-p90-ms")
		if i > 0 {
			b.ReportMetric(float64(median(times[i]))/float64(bare), name+"-x-bare")
		}
	}
}

func median(ds []time.Duration) time.Duration { return percentile(ds, 0.5) }

func percentile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
