package doctor

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

var knownCodes = map[string]bool{
	CodeOK: true, CodeNotRoot: true, CodeUsernsUnavailable: true, CodeMountnsUnavailable: true,
	CodePivotRootUnavailable: true, CodeMountAPIUnavailable: true, CodeSeccompUnavailable: true, CodeCgroupUnavailable: true,
	CodeOverlayUnavailable: true, CodePythonMissing: true, CodePythonVersion: true, CodeWasiRevision: true,
	CodeWazeroUnpatched: true,
}

func TestReportIsWellFormed(t *testing.T) {
	r := Run(context.Background())
	names := map[string]bool{}
	for _, c := range r.Checks {
		if names[c.Name] {
			t.Errorf("duplicate check name %q", c.Name)
		}
		names[c.Name] = true
		if !knownCodes[c.Status] {
			t.Errorf("%s: unknown status %q", c.Name, c.Status)
		}
		if c.Detail == "" {
			t.Errorf("%s: empty detail", c.Name)
		}
		if !c.OK() && c.Fix == "" {
			t.Errorf("%s: failed without a fix", c.Name)
		}
	}
	for _, want := range []string{"root", "user_namespaces", "mount_namespaces", "pivot_root", "mount_setattr",
		"seccomp_kernel", "libseccomp", "overlayfs", "python", "wasi_python_revision", "wazero_runtime"} {
		if !names[want] {
			t.Errorf("check %q missing", want)
		}
	}
	if f := r.FirstFailure(); (f == nil) != r.OK {
		t.Errorf("OK=%v but FirstFailure=%v", r.OK, f)
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s", b)
}

// On a CI machine every required feature must be there.
func TestHostIsReady(t *testing.T) {
	testenv.NeedRoot(t)
	r := Run(context.Background())
	if f := r.FirstFailure(); f != nil {
		testenv.Need(t, false, f.Name+": "+f.Status+": "+f.Detail+" (fix: "+f.Fix+")")
	}
}

func TestFirstFailure(t *testing.T) {
	r := Report{Checks: []Check{
		{Name: "a", Status: CodeOK, Required: true},
		{Name: "b", Status: CodeOverlayUnavailable, Required: false},
		{Name: "c", Status: CodeCgroupUnavailable, Required: true},
		{Name: "d", Status: CodePythonMissing, Required: true},
	}}
	if f := r.FirstFailure(); f == nil || f.Name != "c" {
		t.Fatalf("FirstFailure = %+v, want c", f)
	}
}

// Quick names the same checks as Run and agrees with it on this host.
func TestQuickAgreesWithRun(t *testing.T) {
	full, quick := Run(context.Background()), Quick()
	if len(full.Checks) != len(quick.Checks) {
		t.Fatalf("Run has %d checks, Quick %d", len(full.Checks), len(quick.Checks))
	}
	for i := range full.Checks {
		f, q := full.Checks[i], quick.Checks[i]
		if f.Name != q.Name || f.Required != q.Required {
			t.Errorf("check %d: Run %s/%v, Quick %s/%v", i, f.Name, f.Required, q.Name, q.Required)
		}
		if f.OK() && !q.OK() {
			t.Errorf("%s: Run ok, Quick %s: %s", f.Name, q.Status, q.Detail)
		}
	}
}
