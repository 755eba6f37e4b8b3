package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// Status is the terminal state of one run (SPEC.md section 10).
type Status string

const (
	StatusOK          Status = "ok"
	StatusError       Status = "error"
	StatusTimeout     Status = "timeout"
	StatusMemoryLimit Status = "memory_limit"
	StatusKilled      Status = "killed"
	StatusRefused     Status = "refused"
	StatusSetupFailed Status = "setup_failed"
)

// Paths inside every guest, identical on both backends so that a script sees
// the same world natively and under wazero.
const (
	GuestFilesDir = "/opt/apysup"         // embedded guest Python files, read-only
	GuestRunDir   = "/run/apysup"         // channel.json, the socket, the job, read-only
	GuestJobDir   = "/run/apysup/job"     // the script and prelude.py, read-only
	GuestOutDir   = "/run/apysup/out"     // outcome.json, written by the runner
	GuestWorkDir  = "/workspace"          // read-write, cwd
	GuestTmpDir   = "/tmp"                // read-write, the run's own (Limits.TmpBytes)
	GuestPython   = "/usr/bin/python3.11" // the interpreter path the guest sees
	GuestRunner   = "/opt/apysup/apysup_runner.py"

	// Files of the job directory besides the script (GuestJobDir/<base name>).
	PreludeFile = "prelude.py"
	ArgvFile    = ".argv"        // script, then args, each NUL-terminated (--argv)
	StreamFile  = ".stream"      // present when the job has an Output: the runner line-buffers
	OutcomeFile = "outcome.json" // in GuestOutDir
	// EndedFile, in GuestOutDir, is the native runner's report of its end:
	// its exit status in decimal, written last (python/guest/apysup_runner.py,
	// ENDED).
	EndedFile = "ended"
)

// HostPackageDirs are where the host's own Python packages live, the
// directories Debian's site module adds (site.getsitepackages()). The
// guest sees none of them: natively each one the host has is hidden
// under an empty read-only directory (the sandbox binds the host's whole
// /usr), and under wazero each one the host has is an empty directory, so
// site.main() or a path appended by hand finds nothing on either. Only
// the standard library is the host's.
var HostPackageDirs = []string{"/usr/local/lib/python3.11/dist-packages", "/usr/lib/python3/dist-packages",
	"/usr/lib/python3.11/dist-packages"}

// RunnerArgv is the guest's command line on both backends. It names no
// script: the runner reads the script's argv from ArgvFile, so that a
// sandbox can be started before its job is known.
func RunnerArgv() []string {
	return []string{GuestPython, "-I", "-S", GuestRunner,
		"--prelude", GuestJobDir + "/" + PreludeFile,
		"--outcome", GuestOutDir + "/" + OutcomeFile,
		"--workdir", GuestWorkDir,
		"--argv", GuestJobDir + "/" + ArgvFile}
}

// ScriptName is the base name of the job's script in GuestJobDir. Names of
// the job directory's own files, and every name starting with a dot, are
// refused.
func (j Job) ScriptName() (string, error) {
	name := filepath.Base(j.ScriptPath)
	if j.ScriptPath == "" || name == PreludeFile || strings.HasPrefix(name, ".") {
		return "", fmt.Errorf("script name %q is reserved", name)
	}
	return name, nil
}

// MaxScriptBytes bounds the script file a job names.
const MaxScriptBytes = 4 << 20

// ReadScript reads the job's script: Source, or else a regular file (a
// symlink to one is followed) of at most MaxScriptBytes, never a FIFO or a
// device that would block or never end.
func (j Job) ReadScript() ([]byte, error) {
	if j.Source != nil {
		if len(j.Source) > MaxScriptBytes {
			return nil, fmt.Errorf("the script is larger than %d bytes", MaxScriptBytes)
		}
		return j.Source, nil
	}
	f, err := os.OpenFile(j.ScriptPath, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	switch {
	case err != nil:
		return nil, err
	case !fi.Mode().IsRegular():
		return nil, fmt.Errorf("%s is not a regular file", j.ScriptPath)
	case fi.Size() > MaxScriptBytes:
		return nil, fmt.Errorf("%s is larger than %d bytes", j.ScriptPath, MaxScriptBytes)
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxScriptBytes+1))
	if err == nil && len(b) > MaxScriptBytes {
		err = fmt.Errorf("%s grew beyond %d bytes", j.ScriptPath, MaxScriptBytes)
	}
	return b, err
}

// ArgvFileData is the content of ArgvFile: the script's path in the
// guest, then the job's arguments, each followed by a NUL byte (as in
// /proc/PID/cmdline; an argument cannot hold one, as on any command line).
func (j Job) ArgvFileData() ([]byte, error) {
	name, err := j.ScriptName()
	if err != nil {
		return nil, err
	}
	b := append([]byte(GuestJobDir+"/"+name), 0)
	for i, a := range j.Args {
		if strings.IndexByte(a, 0) >= 0 {
			return nil, fmt.Errorf("argument %d holds a NUL byte", i+1)
		}
		b = append(append(b, a...), 0)
	}
	return b, nil
}

// Outcome.ErrorCode values both backends report, defined once so that the
// two spell them alike (parity compares them).
const (
	CodeInvalidJob      = "invalid_job"
	CodeSetupFailed     = "setup_failed"
	CodeCanceled        = "canceled"
	CodeOutcomeTooLarge = "outcome_too_large"
	CodeInvalidLimits   = "invalid_limits"
	// CodeKilledBySignal, followed by ":" and the signal's name: the
	// guest died of a signal (its own doing: a crash, abort, a signal it
	// sent itself), an error with exit status 128+N.
	CodeKilledBySignal = "killed_by_signal"
)

// Job is what one run executes. All paths are host paths.
type Job struct {
	// ScriptPath is the host file holding the user's script. It is copied
	// into the job directory and appears as GuestJobDir/<base name>.
	// With Source set it only names the script: its base name is used,
	// nothing is read from it.
	ScriptPath string
	// Source, when not nil, is the script's text, held by the caller (a
	// service's request): no file is written or read for it.
	Source []byte
	Args   []string
	// Prelude is the generated Python prelude (plan.Presentation).
	Prelude []byte
	// WorkspaceDir is a host directory owned by this run, mounted read-write
	// at GuestWorkDir. The caller creates, snapshots and removes it.
	WorkspaceDir string
	// RunDir is a host directory owned by this run: natively it holds
	// channel.json and the channel socket and is mounted read-only at
	// GuestRunDir; under wazero it holds the out directory. Either way it
	// is swept with the run when its supervisor died.
	RunDir string
	// Output, when set, receives the guest's stdout and stderr while it
	// runs (see Output); the Outcome keeps them either way. With one the
	// guest line-buffers its stdout (StreamFile), so that lines leave it
	// as they are printed; without, it buffers as CPython does on a pipe.
	Output Output
}

// Outcome is what a backend reports about one run.
type Outcome struct {
	Status          Status
	ErrorCode       string // typed reason for refused / setup_failed / killed
	ExitCode        int
	Stdout, Stderr  []byte
	StdoutTruncated bool
	StderrTruncated bool
	// GuestOutcome is the runner's outcome.json, bounded, not yet trusted.
	GuestOutcome json.RawMessage
	Timings      Timings
	Usage        Usage
}

// Timings are wall-clock phases of one run.
type Timings struct {
	Prepare time.Duration `json:"prepare_ns"`
	Start   time.Duration `json:"start_ns"`
	Run     time.Duration `json:"run_ns"`
	Destroy time.Duration `json:"destroy_ns"`
}

// Usage is what the run consumed, where the backend can measure it.
type Usage struct {
	PeakMemoryBytes int64 `json:"peak_memory_bytes,omitempty"`
	CPUTimeNs       int64 `json:"cpu_time_ns,omitempty"`
	Pids            int64 `json:"pids,omitempty"`
}

// Backend runs jobs. Implementations never fall back to weaker confinement:
// an unavailable feature is a typed refusal.
type Backend interface {
	Name() string
	Run(ctx context.Context, job Job, limits Limits) (*Outcome, error)
}
