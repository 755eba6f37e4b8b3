// Package bothbackends gives an integration test binary that runs guests on
// both backends (integration/parity, integration/regrtest) its one
// Supervisor: the wazero module is compiled (or loaded from the on-disk
// cache) once and every run reuses it. Its StateDir is private so that the
// binary can demand it be empty at the end.
package bothbackends

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/apysup/apysup/internal/sandbox/doctor"
	"github.com/apysup/apysup/internal/sandbox/native"
	_ "github.com/apysup/apysup/internal/sandbox/native/mainthread" // the main goroutine keeps the main thread (see the package)
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/internal/testenv"
)

// Suite is the Supervisor of one test binary, made on first use.
type Suite struct {
	// StatePrefix names the private state directory (short: socket paths
	// must fit sun_path).
	StatePrefix string
	// Pool, when positive, keeps that many sandboxes per limits class
	// and that many wazero children ahead of their runs, interpreters
	// started (make test-pooled): runs that find one ready take it.
	Pool int

	once     sync.Once
	sup      *supervisor.Supervisor
	stateDir string
	err      error
	native   *doctor.Check
	wasi     error
}

// Main is the binary's TestMain: the native backend's entry point (a
// re-executed test binary becomes the container's init), the tests, then
// Close, whose failure fails the binary.
func (s *Suite) Main(m *testing.M) {
	native.MaybeInit()
	code := m.Run()
	if err := s.Close(); err != nil {
		fmt.Fprintln(os.Stderr, "integration:", err)
		code = 1
	}
	os.Exit(code)
}

// Need returns the Supervisor, or stops the test when either backend
// cannot run here: a skip locally, a failure under APYSUP_REQUIRE_ALL=1
// (and a skip with -short). Neither backend is optional.
func (s *Suite) Need(t testing.TB) *supervisor.Supervisor {
	t.Helper()
	if testing.Short() {
		t.Skip("real guests are not run with -short (make unit)")
	}
	testenv.NeedRoot(t)
	s.once.Do(func() {
		s.native = doctor.Run(context.Background()).FirstFailure()
		_, s.wasi = wazero.Locate("")
		if s.native != nil || s.wasi != nil {
			return
		}
		s.stateDir, s.err = os.MkdirTemp("", s.StatePrefix)
		if s.err == nil {
			// Each native run's container root (an unprivileged host uid)
			// must traverse it, as it does /tmp.
			s.err = os.Chmod(s.stateDir, 0o711)
		}
		if s.err == nil {
			s.sup = supervisor.New(supervisor.Config{StateDir: s.stateDir,
				NativePool: s.Pool, NativePoolClasses: 8, WazeroPool: s.Pool})
		}
	})
	if f := s.native; f != nil {
		testenv.Need(t, false, "native backend: "+f.Name+": "+f.Status+": "+f.Detail+" (fix: "+f.Fix+")")
	}
	var ue *wazero.UnavailableError
	if errors.As(s.wasi, &ue) {
		testenv.Need(t, false, "the WASI CPython build ("+wazero.BuildCommand+"): "+ue.Reason)
	}
	if s.wasi != nil {
		t.Fatal(s.wasi)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.sup
}

// Close ends the Supervisor and checks that no run left anything in the
// state directory.
func (s *Suite) Close() error {
	if s.sup == nil {
		return nil
	}
	err := s.sup.Close()
	entries, rerr := os.ReadDir(s.stateDir)
	if rerr == nil && len(entries) > 0 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		err = errors.Join(err, fmt.Errorf("left behind in %s: %s", s.stateDir, strings.Join(names, ", ")))
	}
	return errors.Join(err, rerr, os.RemoveAll(s.stateDir))
}
