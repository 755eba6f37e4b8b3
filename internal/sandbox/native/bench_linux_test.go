package native

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/python"
)

// The baseline: the interpreter alone, no runner, no confinement.
func BenchmarkBarePython(b *testing.B) {
	for b.Loop() {
		if err := exec.Command(sandbox.GuestPython, "-S", "-c", "pass").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// The runner and an empty script, unconfined: what the guest itself costs.
func BenchmarkBareRunner(b *testing.B) {
	dir := b.TempDir()
	for _, name := range []string{"prelude.py", "main.py"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := writeGuestFiles(guestFiles(), filepath.Join(dir, "guest")); err != nil {
		b.Fatal(err)
	}
	runner := filepath.Join(dir, "guest", python.Runner)
	for b.Loop() {
		cmd := exec.Command(sandbox.GuestPython, "-I", "-S", runner, "--workdir", dir, "--prelude", filepath.Join(dir, "prelude.py"),
			"--outcome", filepath.Join(dir, "outcome.json"), "--", filepath.Join(dir, "main.py"))
		cmd.Env = guestEnv
		if err := cmd.Run(); err != nil {
			b.Fatal(err)
		}
	}
}

// A whole confined run of an empty script, with its phases as metrics.
func BenchmarkNativeRunEmpty(b *testing.B) {
	be := testBackend(b)
	job := newJob(b, "")
	var prep, start, run, destroy time.Duration
	for b.Loop() {
		out, err := be.Run(context.Background(), job, sandbox.Limits{})
		if err != nil || out.Status != sandbox.StatusOK {
			b.Fatalf("%v %+v", err, out)
		}
		prep += out.Timings.Prepare
		start += out.Timings.Start
		run += out.Timings.Run
		destroy += out.Timings.Destroy
	}
	n := float64(b.N)
	b.ReportMetric(float64(prep.Microseconds())/n, "prepare-us/op")
	b.ReportMetric(float64(start.Microseconds())/n, "start-us/op")
	b.ReportMetric(float64(run.Microseconds())/n, "run-us/op")
	b.ReportMetric(float64(destroy.Microseconds())/n, "destroy-us/op")
}

// runPass runs `python3.11 -S -c pass` confined exactly like a job (the
// runner replaced by the bare interpreter), to compare with BarePython.
func runPass(b *testing.B, be *Backend, job sandbox.Job) *sandbox.Outcome {
	s, err := be.Prepare(context.Background(), sandbox.Limits{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Destroy()
	s.args = []string{sandbox.GuestPython, "-S", "-c", "pass"}
	if err := s.Start(); err != nil {
		b.Fatal(err)
	}
	if err := s.Assign(job); err != nil {
		b.Fatal(err)
	}
	out, err := s.Wait(context.Background())
	if err != nil || out.Status != sandbox.StatusOK {
		b.Fatalf("%v %+v", err, out)
	}
	if err := s.Destroy(); err != nil {
		b.Fatal(err)
	}
	out.Timings = s.timings
	return out
}

// BenchmarkStartupRatio interleaves a bare `python3.11 -S -c pass` with the
// same command confined (complete confinement) in a sandbox started for
// the job (Prepare to Destroy, "native"), and with an empty script run by
// the real runner in a sandbox taken from a Pool ("pooled": Take to
// Destroy; the interpreter was already waiting for its job; the pool is
// refilled before the next sample, so that no sample shares the CPU with a
// sandbox starting in the background). It reports medians, p90 and the
// ratios of medians.
func BenchmarkStartupRatio(b *testing.B) {
	be := testBackend(b)
	pool, err := be.NewPool(PoolConfig{Size: 1, Limits: []sandbox.Limits{{}}})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close()
	job := newJob(b, "")
	var bare, conf, pooled, start, wait, destroy, pooledDestroy []time.Duration
	for b.Loop() {
		waitFull(b, pool)
		t0 := time.Now()
		if err := exec.Command(sandbox.GuestPython, "-S", "-c", "pass").Run(); err != nil {
			b.Fatal(err)
		}
		bare = append(bare, time.Since(t0))
		t0 = time.Now()
		out := runPass(b, be, job)
		conf = append(conf, time.Since(t0))
		start = append(start, out.Timings.Start)
		wait = append(wait, out.Timings.Run)
		destroy = append(destroy, out.Timings.Destroy)
		t0 = time.Now()
		out, err := pool.Run(context.Background(), job, sandbox.Limits{})
		pooled = append(pooled, time.Since(t0))
		if err != nil || out.Status != sandbox.StatusOK {
			b.Fatalf("%v %+v", err, out)
		}
		pooledDestroy = append(pooledDestroy, out.Timings.Destroy)
	}
	if st := pool.Stats(); st.Cold != 0 {
		b.Fatalf("pooled samples ran cold: %+v", st)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(quantile(bare, 0.5)), "bare-p50-ms")
	b.ReportMetric(ms(quantile(bare, 0.9)), "bare-p90-ms")
	b.ReportMetric(ms(quantile(conf, 0.5)), "native-p50-ms")
	b.ReportMetric(ms(quantile(conf, 0.9)), "native-p90-ms")
	b.ReportMetric(ms(quantile(pooled, 0.5)), "pooled-p50-ms")
	b.ReportMetric(ms(quantile(pooled, 0.9)), "pooled-p90-ms")
	b.ReportMetric(ms(quantile(start, 0.5)), "start-p50-ms")
	b.ReportMetric(ms(quantile(wait, 0.5)), "wait-p50-ms")
	b.ReportMetric(ms(quantile(destroy, 0.5)), "destroy-p50-ms")
	b.ReportMetric(ms(quantile(pooledDestroy, 0.5)), "pooled-destroy-p50-ms")
	b.ReportMetric(float64(quantile(conf, 0.5))/float64(quantile(bare, 0.5)), "ratio-p50")
	b.ReportMetric(float64(quantile(pooled, 0.5))/float64(quantile(bare, 0.5)), "ratio-pooled-p50")
}

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[int(q*float64(len(s)-1))]
}

// BenchmarkCgroupWarmup interleaves confined runs with and without the
// cgroup warm-up kick (see cgroupWarmer) and reports both medians.
func BenchmarkCgroupWarmup(b *testing.B) {
	be := testBackend(b)
	cold, err := New(Config{GuestFiles: guestFiles()})
	if err != nil {
		b.Fatal(err)
	}
	defer cold.Close()
	cold.warmer = &cgroupWarmer{} // no procs file: kick does nothing
	job := newJob(b, "")
	var warmStart, coldStart, warmAll, coldAll []time.Duration
	for b.Loop() {
		t0 := time.Now()
		out := runPass(b, be, job)
		warmAll = append(warmAll, time.Since(t0))
		warmStart = append(warmStart, out.Timings.Start)
		t0 = time.Now()
		out = runPass(b, cold, job)
		coldAll = append(coldAll, time.Since(t0))
		coldStart = append(coldStart, out.Timings.Start)
	}
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(quantile(warmStart, 0.5)), "warm-start-p50-ms")
	b.ReportMetric(ms(quantile(coldStart, 0.5)), "cold-start-p50-ms")
	b.ReportMetric(ms(quantile(warmAll, 0.5)), "warm-run-p50-ms")
	b.ReportMetric(ms(quantile(coldAll, 0.5)), "cold-run-p50-ms")
}
