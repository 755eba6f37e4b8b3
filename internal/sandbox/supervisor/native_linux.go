package supervisor

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native"
)

// nativeState is the native backend and its pool, built on a Supervisor's
// first native run.
type nativeState struct {
	once    sync.Once
	backend *native.Backend
	pool    *native.Pool
	err     error
	mu      sync.Mutex // guards pool for PoolState while once builds it
}

// close closes the pool and the backend; the runs' sandboxes were
// destroyed by their teardowns (Supervisor.Close waits for those first).
func (n *nativeState) close() error {
	var errs []error
	if n.pool != nil {
		errs = append(errs, n.pool.Close())
	}
	if n.backend != nil {
		errs = append(errs, n.backend.Close())
	}
	return errors.Join(errs...)
}

// sweepNative removes what native sandboxes of dead supervisors left in
// the state directory (killing their guests): first, since their mounts
// keep those supervisors' run directories busy.
func (s *Supervisor) sweepNative() { _ = native.Sweep(s.cfg.StateDir, "") }

func (s *Supervisor) nativeBackend() (*native.Backend, error) {
	s.native.once.Do(func() {
		s.native.backend, s.native.err = native.New(native.Config{GuestFiles: s.cfg.GuestFiles, StateDir: s.cfg.StateDir})
		if s.native.err == nil && s.cfg.NativePool > 0 {
			pool, err := s.native.backend.NewPool(native.PoolConfig{Size: s.cfg.NativePool,
				Limits: []sandbox.Limits{s.cfg.NativePoolLimits}, MaxClasses: s.cfg.NativePoolClasses, Idle: s.cfg.NativePoolIdle})
			if s.native.err = err; err != nil {
				s.native.backend.Close()
				s.native.backend = nil
			}
			s.native.mu.Lock()
			s.native.pool = pool
			s.native.mu.Unlock()
		}
	})
	return s.native.backend, s.native.err
}

// runNative takes a started sandbox from the pool, or prepares and starts
// one while it opens the run's channel on a socket owned by the run's host
// uid, then assigns the job (the channel file, with the run's credential,
// reaches the guest only then) and waits for the guest. The sandbox's
// release and destruction and the socket's removal are left to undo, which
// runs after the result is returned: nothing of the result waits for them.
func (s *Supervisor) runNative(ctx context.Context, b *broker.Broker, runID string, req Request, job sandbox.Job, runDir string, undo *teardown) (*sandbox.Outcome, error) {
	be, err := s.nativeBackend()
	if err != nil {
		return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed), err
	}
	var startErr error
	startDone := make(chan struct{})
	var sb *native.Sandbox
	if s.native.pool != nil {
		sb = s.native.pool.Take(req.Limits)
	}
	if sb != nil {
		close(startDone) // started ahead
	} else {
		if sb, err = be.Prepare(ctx, req.Limits); err != nil {
			return outcomeOf(err), err
		}
		// Nothing of the container depends on the job: it starts while
		// the channel opens.
		go func() { defer close(startDone); startErr = sb.Start() }()
	}
	undo.add(func() error {
		<-startDone
		return sb.Destroy() // releases first, unless the step below did
	})
	ids := sb.HostIDs()
	sock, err := rpc.ListenRunSocket(runDir, &rpc.Owner{UID: int(ids.Guest), GID: int(ids.Guest)})
	if err != nil {
		return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed), err
	}
	undo.add(sock.Close)
	channelID, _ := newID("chn-")
	invocationID, _ := newID("inv-")
	ch, credential, err := s.channels.Open(rpc.ChannelConfig{
		ChannelID: channelID, InvocationID: invocationID, ExecutionID: runID, PlanSHA256: req.Plan.Identity(),
		Expiry: time.Now().Add(req.Limits.Timeout + time.Minute), PeerUID: ids.Guest, Dispatcher: b,
	})
	if err != nil {
		return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed), err
	}
	// The channel ends before the run's result: a call still in flight
	// (waiting for an approval, say) is cancelled and its receipt made.
	defer s.channels.Close(ch.ID())
	if err := sock.WriteChannelFile(rpc.NewChannelFile(ch, sandbox.GuestRunDir+"/"+rpc.SocketName, credential)); err != nil {
		return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed), err
	}
	srv := rpc.NewServer(s.channels, rpc.DefaultServerConfig())
	served := make(chan struct{})
	go func() { defer close(served); srv.Serve(sock.Listener) }()
	defer func() { srv.Close(); <-served }()

	job.RunDir = sock.Dir
	if <-startDone; startErr != nil {
		return outcomeOf(startErr), startErr
	}
	// Undone first: the job's mounts in the socket's directory go before
	// that directory does.
	undo.add(sb.Release)
	if err := sb.Assign(job); err != nil {
		return outcomeOf(err), err
	}
	return sb.Wait(ctx)
}

func (s *Supervisor) prepareNative() error {
	_, err := s.nativeBackend()
	return err
}

// PoolState is what the native pool holds and has done.
func (s *Supervisor) PoolState() PoolState {
	st := PoolState{Size: s.cfg.NativePool}
	if p := s.native.poolIfBuilt(); p != nil {
		ps := p.Stats()
		st.Ready, st.Classes = p.Ready(), p.Classes()
		st.Started, st.Taken, st.Cold, st.Discarded, st.Expired = ps.Started, ps.Pooled, ps.Cold, ps.Discarded, ps.Expired
		if err := p.Err(); err != nil {
			st.Error = err.Error()
		}
	}
	return st
}

// poolIfBuilt is the pool once the backend's first use has built it.
func (n *nativeState) poolIfBuilt() *native.Pool {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.pool
}
