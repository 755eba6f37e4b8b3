package sandbox

import (
	"math"
	"strings"
	"time"
)

// Limits bound one run. Zero values mean "use the default" (DefaultLimits);
// WithDefaults applies them and checks the result, for every backend.
type Limits struct {
	Timeout       time.Duration // wall clock; kills the whole tree
	MemoryBytes   int64         // cgroup memory limit (native) / linear memory cap (wazero)
	Pids          int64         // cgroup pids limit (native only)
	CPUs          float64       // cgroup CPU quota in cores (native only)
	TmpBytes      int64         // bytes /tmp holds: a tmpfs natively (and /dev/shm another), a budget under wazero
	OutputBytes   int           // cap for stdout and for stderr, each
	OpenFiles     uint64        // RLIMIT_NOFILE
	FileSizeBytes int64         // RLIMIT_FSIZE
	// WorkspaceBytes and WorkspaceFiles bound /workspace: a tmpfs of this
	// size and inode count when the supervisor runs as root, and the budget
	// of the final snapshot on every backend.
	WorkspaceBytes int64
	WorkspaceFiles int64
}

// TmpFiles is how many files /tmp holds, from its size: the inodes of the
// native tmpfs (one per 4 KiB page, at least 1024) and the wazero budget.
func (l Limits) TmpFiles() int64 {
	return max(l.TmpBytes/4096, 1024)
}

// CPUSeconds is each native guest process's RLIMIT_CPU (its soft limit;
// the hard limit is one more). A backstop only: the supervisor's timer
// kills the tree first, but if the supervisor itself dies a spinning guest
// still ends (SIGXCPU, then SIGKILL). The CPU quota keeps CPU time below
// CPUs x wall time. Generous (twice the quota's worth, plus 10 s), so that
// a late timer on a loaded host is never overtaken by the backstop. The
// wazero guest's resource.getrlimit answers the same.
func (l Limits) CPUSeconds() uint64 {
	return uint64(math.Ceil(2*l.Timeout.Seconds()*max(l.CPUs, 1))) + 10
}

// DefaultLimits are the built-in defaults (the lowest selection precedence).
func DefaultLimits() Limits {
	return Limits{
		Timeout:        30 * time.Second,
		MemoryBytes:    512 << 20,
		Pids:           128,
		CPUs:           1,
		TmpBytes:       64 << 20,
		OutputBytes:    1 << 20,
		OpenFiles:      256,
		FileSizeBytes:  256 << 20,
		WorkspaceBytes: 256 << 20,
		WorkspaceFiles: 16384,
	}
}

// Floors below which no backend can run a guest at all; a limit under its
// floor is refused (invalid_limits), not run to a certain failure.
const (
	MinMemoryBytes = 4 << 20 // the interpreter's own start-up
	MinOpenFiles   = 16      // the standard streams, the runner's files, the channel
	MinCPUs        = 0.01    // the cgroup's smallest useful quota
)

// LimitError is one limit out of range. Field is its name in the CLI's
// and the RunResult's spelling (memory_bytes).
type LimitError struct {
	Field  string
	Reason string
}

func (e *LimitError) Error() string {
	return e.Field + ": " + e.Reason + " (" + CodeInvalidLimits + ")"
}

// ErrorCode is the stable code of every limit refusal, invalid_limits.
func (e *LimitError) ErrorCode() string { return CodeInvalidLimits }

// LimitErrors is every limit out of range, reported at once.
type LimitErrors []*LimitError

func (l LimitErrors) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap exposes each problem to errors.Is and errors.As.
func (l LimitErrors) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// WithDefaults fills every zero field from DefaultLimits and checks the
// result: one defaulting and one validation for the supervisor and both
// backends (a backend ignores the fields it has no use for: wazero has no
// processes, CPUs or /tmp). The error is LimitErrors.
func (l Limits) WithDefaults() (Limits, error) {
	d := DefaultLimits()
	orDefault(&l.Timeout, d.Timeout)
	orDefault(&l.MemoryBytes, d.MemoryBytes)
	orDefault(&l.Pids, d.Pids)
	orDefault(&l.CPUs, d.CPUs)
	orDefault(&l.TmpBytes, d.TmpBytes)
	orDefault(&l.OutputBytes, d.OutputBytes)
	orDefault(&l.OpenFiles, d.OpenFiles)
	orDefault(&l.FileSizeBytes, d.FileSizeBytes)
	orDefault(&l.WorkspaceBytes, d.WorkspaceBytes)
	orDefault(&l.WorkspaceFiles, d.WorkspaceFiles)
	var errs LimitErrors
	check := func(bad bool, field, reason string) {
		if bad {
			errs = append(errs, &LimitError{Field: field, Reason: reason})
		}
	}
	check(l.Timeout < 0, "timeout", "must be positive")
	check(l.MemoryBytes < MinMemoryBytes, "memory_bytes", "must be at least 4 MiB")
	check(l.Pids < 1, "pids", "must be at least 1")
	check(l.CPUs < MinCPUs, "cpus", "must be at least 0.01")
	check(l.TmpBytes < 0, "tmp_bytes", "must not be negative")
	check(l.OutputBytes < 0, "output_bytes", "must not be negative")
	check(l.OpenFiles < MinOpenFiles, "open_files", "must be at least 16")
	check(l.FileSizeBytes < 0, "file_size_bytes", "must not be negative")
	check(l.WorkspaceBytes < 0, "workspace_bytes", "must not be negative")
	check(l.WorkspaceFiles < 0, "workspace_files", "must not be negative")
	if len(errs) > 0 {
		return l, errs
	}
	return l, nil
}

// orDefault sets *v to d when *v is the zero value ("use the default").
func orDefault[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}

// The guest's /dev is a small tmpfs of its own on both backends' terms: the
// native sandbox mounts it with these bounds (native/config_linux.go), and
// the wazero backend's statvfs answers with them (wazero/statvfs.go).
const (
	DevBytes = 64 << 10
	DevFiles = 64
)
