package native

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/doctor"
)

// A host without a required feature refuses with the doctor's code and
// never starts anything.
func TestRefusesWithTheDoctorsCode(t *testing.T) {
	testBackend(t)
	b, err := New(Config{GuestFiles: guestFiles()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.quickOnce.Do(func() {})
	b.quick = doctor.Report{Checks: []doctor.Check{
		{Name: "root", Status: doctor.CodeOK, Required: true},
		{Name: "user_namespaces", Status: doctor.CodeUsernsUnavailable, Required: true, Detail: "off", Fix: "turn on"},
	}}
	out, err := b.Run(context.Background(), newJob(t, "print(1)"), sandbox.Limits{})
	var e *Error
	if !errors.As(err, &e) || e.Code != doctor.CodeUsernsUnavailable {
		t.Fatalf("err %v", err)
	}
	if out.Status != sandbox.StatusRefused || out.ErrorCode != doctor.CodeUsernsUnavailable {
		t.Fatalf("outcome %+v", out)
	}
	assertClean(t, b)
}

func TestRefusesBadJobsAndLimits(t *testing.T) {
	b := testBackend(t)
	good := newJob(t, "pass")
	reserved := newJob(t, "pass")
	reserved.ScriptPath = filepath.Join(filepath.Dir(reserved.ScriptPath), "prelude.py")
	if err := os.WriteFile(reserved.ScriptPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		job    func(sandbox.Job) sandbox.Job
		limits sandbox.Limits
		code   string
	}{
		{"no workspace", func(j sandbox.Job) sandbox.Job { j.WorkspaceDir = ""; return j }, sandbox.Limits{}, CodeInvalidJob},
		{"workspace missing", func(j sandbox.Job) sandbox.Job { j.WorkspaceDir += "-gone"; return j }, sandbox.Limits{}, CodeInvalidJob},
		{"script missing", func(j sandbox.Job) sandbox.Job { j.ScriptPath += "-gone"; return j }, sandbox.Limits{}, CodeInvalidJob},
		{"reserved name", func(sandbox.Job) sandbox.Job { return reserved }, sandbox.Limits{}, CodeInvalidJob},
		{"tiny memory", func(j sandbox.Job) sandbox.Job { return j }, sandbox.Limits{MemoryBytes: 1 << 20}, CodeInvalidLimits},
		{"negative timeout", func(j sandbox.Job) sandbox.Job { return j }, sandbox.Limits{Timeout: -1}, CodeInvalidLimits},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := b.Run(context.Background(), tc.job(good), tc.limits)
			var e *Error
			if !errors.As(err, &e) || out.Status != sandbox.StatusRefused || out.ErrorCode != tc.code || e.Code != tc.code {
				t.Fatalf("err %v outcome %+v, want refused %s", err, out, tc.code)
			}
			assertClean(t, b)
		})
	}
	if entries, _ := os.ReadDir(good.RunDir); len(entries) != 0 {
		t.Errorf("RunDir holds %v after refusals", entries)
	}
}

// The guest inherits stdin, stdout and stderr only.
func TestNoInheritedDescriptors(t *testing.T) {
	b := testBackend(t)
	extra, err := os.Open("/etc/hostname")
	if err != nil {
		t.Fatal(err)
	}
	defer extra.Close()
	out := run(t, b, "import os\nprint(sorted(os.listdir('/proc/self/fd')), os.uname().nodename)\n", sandbox.Limits{})
	// 3 is the directory listing itself.
	if got := string(out.Stdout); got != "['0', '1', '2', '3'] sandbox\n" {
		t.Fatalf("stdout %q stderr %q", got, out.Stderr)
	}
}

// A container that fails to start on a host the full doctor finds lacking
// is refused with the doctor's code, not reported as setup_failed.
func TestStartFailureIsDiagnosed(t *testing.T) {
	testBackend(t)
	b, err := New(Config{GuestFiles: guestFiles()})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	b.doctorOnce.Do(func() {})
	b.report = doctor.Report{Checks: []doctor.Check{
		{Name: "user_namespaces", Status: doctor.CodeUsernsUnavailable, Required: true, Detail: "probe failed", Fix: "x"},
	}}
	s, err := b.Prepare(context.Background(), sandbox.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	s.args = []string{"/nonexistent"} // the start fails
	err = s.Start()
	var e *Error
	if !errors.As(err, &e) || e.Status != sandbox.StatusRefused || e.Code != doctor.CodeUsernsUnavailable {
		t.Fatalf("err %v", err)
	}
	if err := s.Destroy(); err != nil {
		t.Fatal(err)
	}
	assertClean(t, b)
}
