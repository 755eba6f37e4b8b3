package doctor

import (
	"context"
	"sync"
	"time"

	"github.com/apysup/apysup/internal/sandbox/wazero"
)

// Reason codes. They are stable: callers and users match on them.
const (
	CodeOK                   = "ok"
	CodeNotRoot              = "not_root"
	CodeUsernsUnavailable    = "userns_unavailable"
	CodeMountnsUnavailable   = "mountns_unavailable"
	CodePivotRootUnavailable = "pivot_root_unavailable"
	CodeMountAPIUnavailable  = "mount_api_unavailable"
	CodeSeccompUnavailable   = "seccomp_unavailable"
	CodeCgroupUnavailable    = "cgroup_unavailable"
	CodeOverlayUnavailable   = "overlayfs_unavailable"
	CodePythonMissing        = "python_missing"
	CodePythonVersion        = "python_version_mismatch"
	// CodeWasiRevision: the host's python3.11 (the native guest) is not the
	// Debian revision the WASI build is built from; the wazero backend
	// refuses to run with the same code. Not required by the native backend.
	CodeWasiRevision = wazero.ErrorCodeRevisionMismatch
	// CodeWazeroUnpatched: the binary was built against wazero as
	// released, without apysup's patch (built outside make): the wazero
	// backend runs the same and loads each child about 45 ms slower. Not
	// required.
	CodeWazeroUnpatched = "wazero_unpatched"
	// CodeUnsupportedOS: the native backend is Linux's (namespaces,
	// cgroups, seccomp, libcontainer); elsewhere it is always refused.
	CodeUnsupportedOS = "native_unsupported_os"
)

// Check is the result of one host feature check.
type Check struct {
	Name string `json:"name"`
	// Status is "ok" or a reason code (CodeXxx).
	Status string `json:"status"`
	// Required checks gate the native backend; the others only explain a
	// slower path (e.g. without overlayfs the supervisor binary is copied
	// into memory for each run instead of being sealed with an overlay).
	Required bool   `json:"required"`
	Detail   string `json:"detail"`
	// Fix is one line telling the user what to do; empty when ok.
	Fix string `json:"fix,omitempty"`
}

// OK reports whether the check passed.
func (c Check) OK() bool { return c.Status == CodeOK }

// Report is the result of Run.
type Report struct {
	// OK is true when every required check passed.
	OK       bool          `json:"ok"`
	Checks   []Check       `json:"checks"`
	Duration time.Duration `json:"duration_ns"`
}

// FirstFailure returns the first failed required check, or nil.
func (r Report) FirstFailure() *Check {
	for i := range r.Checks {
		if r.Checks[i].Required && !r.Checks[i].OK() {
			return &r.Checks[i]
		}
	}
	return nil
}

func report(checks []Check, start time.Time) Report {
	r := Report{OK: true, Checks: checks}
	for _, c := range checks {
		if c.Required && !c.OK() {
			r.OK = false
		}
	}
	r.Duration = time.Since(start)
	return r
}

func ok(name, detail string) Check {
	return Check{Name: name, Status: CodeOK, Required: true, Detail: detail}
}

func fail(name, code, detail, fix string) Check {
	return Check{Name: name, Status: code, Required: true, Detail: detail, Fix: fix}
}

// checkWazeroRuntime reports whether the wazero backend runs on wazero
// with apysup's patch (third_party/wazero). Not required: without it a
// run is the same, its start slower. The answer is the binary's, so the
// process asks once (a wazero runtime made and closed, about 0.1 ms).
var checkWazeroRuntime = sync.OnceValue(func() Check {
	const name = "wazero_runtime"
	version, patched := wazero.Runtime(context.Background())
	if version == "" {
		version = "(version unknown)"
	}
	detail := "wazero " + version + " with apysup's patch: a child finds python.wasm's compiled code in the cache and does not validate it again"
	if wazero.GuardedMemory() {
		detail += ", and runs it without bounds checks on a guarded memory"
	} else {
		detail += "; this process cannot reserve a guarded memory (8 GiB of address space, amd64), so the children keep wazero's bounds checks"
	}
	c := ok(name, detail)
	if !patched {
		c = fail(name, CodeWazeroUnpatched, "wazero "+version+" as released: each wazero child validates python.wasm's functions again (about 45 ms) and keeps its bounds checks (CPU-bound code about 1.5x slower)",
			"build apysup with make (make build), whose workspace applies third_party/wazero's patch")
	}
	c.Required = false
	return c
})
