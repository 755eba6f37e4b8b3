package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
	"github.com/apysup/apysup/plan"
)

// Bounds of exec handlers.
const (
	MaxExecArgs        = 64
	MaxExecArgBytes    = 4096
	MaxExecEnv         = 64
	MaxExecOutputBytes = canonjson.MaxGuestBytes
	MaxExecStderrBytes = 64 << 10
	DefaultExecTimeout = 10 * time.Second
	MaxExecTimeout     = time.Hour
	// execPath is the whole PATH of every command unless its config sets one.
	execPath = "/usr/bin:/bin"
	// killGrace bounds the wait for a killed process group's pipes to close;
	// only a process that left the group (setsid) can hold them that long.
	killGrace = 2 * time.Second
)

var envNameRE = pattern.New("A-Za-z_", "A-Za-z0-9_", 128)

// execHandler runs one fixed host command per call (see doc.go).
type execHandler struct {
	argv      []string
	env       []string
	dir       string
	timeout   time.Duration
	maxOutput int
	stderr    *lockedWriter // nil: stderr is drained and dropped
}

func (b *builder) exec(path string, c plan.ManifestCapability, g *plan.ExecGrant) any {
	b.live(path, c)
	f := b.fields(path, c)
	if f == nil {
		return nil
	}
	h := &execHandler{dir: "/"}
	h.argv = f.Strings("argv", true)
	switch {
	case len(h.argv) == 0 && f.Has("argv"):
		f.Problem("argv", "must name a command")
	case len(h.argv) > MaxExecArgs:
		f.Problem("argv", "has too many entries")
	}
	for i, a := range h.argv {
		if len(a) > MaxExecArgBytes || strings.IndexByte(a, 0) >= 0 {
			f.Problem("argv", "entries must be at most 4096 bytes without NUL")
			break
		}
		if i == 0 && !executableFile(a) {
			f.Problem("argv", "argv[0] must be the absolute, clean path of an executable file")
		}
	}
	h.timeout = f.Duration("timeout", DefaultExecTimeout, time.Millisecond, MaxExecTimeout)
	h.maxOutput = int(f.IntegerIn("max_output_bytes", MaxExecOutputBytes, 1, MaxExecOutputBytes))
	env, names := f.StringMap("env")
	if len(names) > MaxExecEnv {
		f.Problem("env", "has too many entries")
	}
	hasPath := false
	for _, k := range names {
		if !envNameRE.MatchString(k) || strings.IndexByte(env[k], 0) >= 0 {
			f.Problem("env", "names must match "+envNameRE.String()+" and values hold no NUL")
			break
		}
		hasPath = hasPath || k == "PATH"
		h.env = append(h.env, k+"="+env[k])
	}
	if !hasPath {
		h.env = append(h.env, "PATH="+execPath)
	}
	if f.Has("dir") {
		h.dir = f.Str("dir", false)
		if st, err := os.Stat(h.dir); !filepath.IsAbs(h.dir) || filepath.Clean(h.dir) != h.dir || err != nil || !st.IsDir() {
			f.Problem("dir", "must be the absolute, clean path of an existing directory")
		}
	}
	prov := b.providerConfig(f)
	f.Done()
	if g != nil {
		if len(h.argv) > 0 && !g.AllowsCommand(h.argv[0]) {
			b.problems = append(b.problems, problem(CodeNotGranted, f.At("argv"), "argv[0] is not one of the grant's commands"))
		}
		if g.MaxTimeout > 0 && h.timeout > g.MaxTimeout {
			b.problems = append(b.problems, problem(CodeNotGranted, f.At("timeout"),
				"is longer than the grant's max_timeout (without a timeout the command gets "+DefaultExecTimeout.String()+")"))
		}
	}
	if b.opts.ExecStderr != nil {
		h.stderr = b.stderrSink()
	}
	if prov != nil {
		return &execProvider{execHandler: h, declared: *prov.profile, credential: prov.credential, checkOnly: b.checkOnly}
	}
	return h
}

func executableFile(p string) bool {
	if !filepath.IsAbs(p) || filepath.Clean(p) != p {
		return false
	}
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// Call runs the command with the canonical arguments on stdin and returns
// the one JSON value it writes to stdout.
func (h *execHandler) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	out, err := h.run(ctx, args, h.maxOutput)
	if err != nil {
		return nil, err
	}
	if canonjson.Validate(out, h.maxOutput) != nil {
		return nil, fail(CodeExecBadOutput)
	}
	return json.RawMessage(bytes.TrimSpace(out)), nil
}

// run runs the command once with stdin and returns what it wrote to
// stdout (at most maxOut bytes) after a zero exit.
func (h *execHandler) run(ctx context.Context, stdin []byte, maxOut int) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(err)
	}
	runCtx, cancel := context.WithTimeout(ctx, h.timeout)
	defer cancel()
	p, err := newPipes()
	if err != nil {
		return nil, fail(CodeExecFailed)
	}
	defer p.closeParent()
	cmd := &exec.Cmd{
		Path: h.argv[0], Args: h.argv, Env: h.env, Dir: h.dir,
		Stdin: p.stdinR, Stdout: p.stdoutW, Stderr: p.stderrW,
		// A group of its own, so a timeout kills every process it started.
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	closeOnExec()
	err = cmd.Start()
	p.closeChild()
	if err != nil {
		return nil, fail(CodeExecFailed)
	}
	pid := cmd.Process.Pid

	var wg sync.WaitGroup
	wg.Add(3)
	go func() { // stdin; a command that does not read it just gets EPIPE
		defer wg.Done()
		_, _ = p.stdinW.Write(stdin)
		_ = p.stdinW.Close()
	}()
	overflow := make(chan struct{})
	var out []byte
	var outErr error
	go func() {
		defer wg.Done()
		out, outErr = readBounded(p.stdoutR, maxOut)
		if errors.Is(outErr, errTooLarge) {
			close(overflow)
		}
	}()
	var stderr []byte
	go func() {
		defer wg.Done()
		stderr, _ = readBounded(p.stderrR, MaxExecStderrBytes)
		_, _ = io.Copy(io.Discard, p.stderrR) // drain, so the command never blocks on it
	}()

	exited := make(chan struct{})
	go func() { waitExited(pid); close(exited) }()
	killed := ""
	select {
	case <-exited:
	case <-runCtx.Done():
		killed = CodeExecTimeout
	case <-overflow:
		killed = CodeExecOutputTooLarge
	}
	// The leader stays a zombie until Wait reaps it, so its pid (the group
	// id) cannot have been reused: kill the whole group, stragglers
	// included. After the reap, a group member still alive keeps the id
	// reserved.
	_ = syscall.Kill(-pid, syscall.SIGKILL)
	<-exited
	waitErr := cmd.Wait()
	// The pipes close as the killed processes exit; bound the wait for any
	// process that left the group (setsid) while holding them.
	grace := time.Now().Add(killGrace)
	p.deadline(grace)
	_ = p.stdinW.Close()
	wg.Wait()
	waitGroupDead(pid, grace)
	if h.stderr != nil && len(stderr) > 0 {
		h.stderr.write(stderr)
	}

	switch {
	case ctx.Err() != nil:
		return nil, cancelled(ctx.Err())
	case killed == CodeExecOutputTooLarge || errors.Is(outErr, errTooLarge):
		return nil, fail(CodeExecOutputTooLarge)
	case killed == CodeExecTimeout:
		return nil, fail(CodeExecTimeout)
	case waitErr != nil || outErr != nil:
		return nil, fail(CodeExecFailed)
	}
	return out, nil
}

// waitGroupDead returns once no process of group pgid is alive (gone or a
// zombie), or at the deadline. A process that received SIGKILL runs no more
// code of its own, but it holds its resources until the kernel has torn it
// down; a call returns only after that.
func waitGroupDead(pgid int, deadline time.Time) {
	for groupAlive(pgid) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

var errTooLarge = errors.New("too large")

// readBounded reads r to EOF, failing with errTooLarge as soon as it has
// more than max bytes (it then stops reading; the caller kills the writer).
func readBounded(r io.Reader, max int) ([]byte, error) {
	var buf bytes.Buffer
	n, err := io.Copy(&buf, io.LimitReader(r, int64(max)+1))
	if err != nil {
		return buf.Bytes(), err
	}
	if n > int64(max) {
		return buf.Bytes()[:max], errTooLarge
	}
	return buf.Bytes(), nil
}

// pipes are the command's stdin, stdout and stderr. Go opens every file
// close-on-exec, so the command inherits exactly these three descriptors.
type pipes struct {
	stdinR, stdinW, stdoutR, stdoutW, stderrR, stderrW *os.File
}

func newPipes() (*pipes, error) {
	var p pipes
	var err error
	if p.stdinR, p.stdinW, err = os.Pipe(); err != nil {
		return nil, err
	}
	if p.stdoutR, p.stdoutW, err = os.Pipe(); err != nil {
		p.closeParent()
		p.closeChild()
		return nil, err
	}
	if p.stderrR, p.stderrW, err = os.Pipe(); err != nil {
		p.closeParent()
		p.closeChild()
		return nil, err
	}
	return &p, nil
}

// closeChild closes the ends the command holds (the parent's copies).
func (p *pipes) closeChild() {
	for _, f := range []*os.File{p.stdinR, p.stdoutW, p.stderrW} {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (p *pipes) closeParent() {
	for _, f := range []*os.File{p.stdinW, p.stdoutR, p.stderrR} {
		if f != nil {
			_ = f.Close()
		}
	}
}

func (p *pipes) deadline(t time.Time) {
	_ = p.stdoutR.SetReadDeadline(t)
	_ = p.stderrR.SetReadDeadline(t)
	_ = p.stdinW.SetWriteDeadline(t)
}

// lockedWriter serialises the exec handlers' writes to Options.ExecStderr.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) write(p []byte) {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, _ = l.w.Write(p)
}

func (b *builder) stderrSink() *lockedWriter {
	if b.stderr == nil {
		b.stderr = &lockedWriter{w: b.opts.ExecStderr}
	}
	return b.stderr
}
