package rpc

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/python"
)

// HostPython is the interpreter every run uses: Debian's CPython 3.11, the
// same version as the WASI build. Never the python3 found on PATH.
const HostPython = "/usr/bin/python3.11"

// ErrPythonMissing means HostPython cannot be run.
var ErrPythonMissing = errors.New("rpc: " + HostPython + " is missing")

// UnsandboxedJob is one guest run on the host, without any confinement.
type UnsandboxedJob struct {
	Script     []byte // the script's source
	ScriptName string // its file name; default "main.py"
	Args       []string
	Prelude    []byte // the generated prelude (plan.Plan.Present)
	Dispatcher broker.Dispatcher
	PlanSHA256 string
	RunID      string // the Broker's run id: the channel's execution id
	// WorkDir is the script's working directory; empty means a fresh
	// directory that is removed afterwards.
	WorkDir     string
	Env         []string // extra environment, KEY=VALUE
	OutputBytes int      // cap for stdout and for stderr, each; default 1 MiB
	Limits      ChannelLimits

	// Test hooks: see the channel as opened, and change what the guest is told.
	onOpen      func(*Registry, *Channel)
	editChannel func(*ChannelFile)
	peerUID     *uint32
	clock       func() time.Time
}

// Result is what one unsandboxed run gave.
type Result struct {
	ExitCode        int
	Stdout, Stderr  []byte
	StdoutTruncated bool
	StderrTruncated bool
	// Outcome is the runner's outcome.json as written, untrusted; nil if the
	// runner wrote none. ParseOutcome reads it.
	Outcome json.RawMessage
}

// RunUnsandboxed runs job's script through the guest runner with the host's
// CPython: guest files, prelude, channel and socket in a temporary
// directory, a real Server and Registry in front of job.Dispatcher.
// Everything it creates is gone when it returns. A non-zero exit is a
// Result, not an error.
func RunUnsandboxed(ctx context.Context, job UnsandboxedJob) (*Result, error) {
	if _, err := os.Stat(HostPython); err != nil {
		return nil, ErrPythonMissing
	}
	root, err := os.MkdirTemp("", "apysup-host-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	layout, err := writeLayout(root, job)
	if err != nil {
		return nil, err
	}

	reg := NewRegistry(RegistryConfig{Now: job.clock})
	ids := randomID()
	peer := uint32(os.Getuid())
	if job.peerUID != nil {
		peer = *job.peerUID
	}
	ch, cred, err := reg.Open(ChannelConfig{
		ChannelID:    "channel-" + ids,
		InvocationID: "invocation-" + ids,
		ExecutionID:  job.RunID,
		PlanSHA256:   job.PlanSHA256,
		Expiry:       time.Now().Add(24 * time.Hour),
		PeerUID:      peer,
		Dispatcher:   job.Dispatcher,
		Limits:       job.Limits,
	})
	if err != nil {
		return nil, err
	}
	defer reg.Close(ch.ID())
	if job.onOpen != nil {
		job.onOpen(reg, ch)
	}

	rs, err := ListenRunSocket(root, nil)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	cf := NewChannelFile(ch, rs.Path, cred)
	if job.editChannel != nil {
		job.editChannel(&cf)
	}
	if err := rs.WriteChannelFile(cf); err != nil {
		return nil, err
	}
	srv := NewServer(reg, ServerConfig{})
	served := make(chan error, 1)
	go func() { served <- srv.Serve(rs.Listener) }()
	defer func() {
		srv.Close()
		<-served
	}()

	return runGuest(ctx, job, layout, filepath.Join(rs.Dir, ChannelFileName))
}

type guestLayout struct {
	runner, prelude, script, outcome, workdir string
}

func writeLayout(root string, job UnsandboxedJob) (guestLayout, error) {
	name := job.ScriptName
	if name == "" {
		name = "main.py"
	}
	if filepath.Base(name) != name || name == "." || name == ".." {
		return guestLayout{}, fmt.Errorf("rpc: script name must be a plain file name: %q", name)
	}
	l := guestLayout{
		runner:  filepath.Join(root, "opt", python.Runner),
		prelude: filepath.Join(root, "job", "prelude.py"),
		script:  filepath.Join(root, "job", name),
		outcome: filepath.Join(root, "out", "outcome.json"),
		workdir: job.WorkDir,
	}
	if l.workdir == "" {
		l.workdir = filepath.Join(root, "workspace")
	}
	for _, d := range []string{"opt", "job", "out", "workspace"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o700); err != nil {
			return l, err
		}
	}
	if err := os.CopyFS(filepath.Join(root, "opt"), python.GuestFiles); err != nil {
		return l, fmt.Errorf("rpc: guest files: %w", err)
	}
	if err := os.WriteFile(l.prelude, job.Prelude, 0o600); err != nil {
		return l, err
	}
	return l, os.WriteFile(l.script, job.Script, 0o600)
}

func runGuest(ctx context.Context, job UnsandboxedJob, l guestLayout, channelFile string) (*Result, error) {
	limit := job.OutputBytes
	if limit <= 0 {
		limit = 1 << 20
	}
	args := []string{"-I", "-S", l.runner, "--prelude", l.prelude, "--outcome", l.outcome,
		"--workdir", l.workdir, "--", l.script}
	cmd := exec.CommandContext(ctx, HostPython, append(args, job.Args...)...)
	cmd.Env = append([]string{"PATH=/usr/bin:/bin", "LANG=C.UTF-8", "APYSUP_CHANNEL_FILE=" + channelFile}, job.Env...)
	cmd.Dir = l.workdir
	stdout, stderr := &capped{limit: limit}, &capped{limit: limit}
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The script may start children: they share its process group and end
	// with it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	var exitErr *exec.ExitError
	if err != nil && !errors.As(err, &exitErr) {
		return nil, fmt.Errorf("rpc: run guest: %w", err)
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return nil, ctxErr
	}
	res := &Result{
		ExitCode:        cmd.ProcessState.ExitCode(),
		Stdout:          stdout.buf.Bytes(),
		Stderr:          stderr.buf.Bytes(),
		StdoutTruncated: stdout.truncated,
		StderrTruncated: stderr.truncated,
	}
	if out, err := readBounded(l.outcome, python.MaxOutcomeBytes); err == nil {
		res.Outcome = out
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return res, nil
}

// capped keeps the first limit bytes written and notes whether more came.
type capped struct {
	buf       bytes.Buffer
	limit     int
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	room := c.limit - c.buf.Len()
	if len(p) > room {
		c.truncated = true
		c.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.buf.Write(p)
}

func readBounded(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("rpc: outcome larger than %d bytes", limit)
	}
	return data, nil
}

func randomID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
