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
	mu      sync.Mutex // guards pool for PoolState while once builds it
	backend *native.Backend
	pool    *native.Pool
	err     error
}

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

func (s *Supervisor) nativeBackend() (*native.Backend, error) {
	s.native.once.Do(func() {
		s.native.backend, s.native.err = native.New(native.Config{GuestFiles: s.cfg.GuestFiles, StateDir: s.cfg.StateDir})
		if s.native.err == nil && s.cfg.NativePool > 0 {
			pool, err := s.native.backend.NewPool(s.cfg.NativePoolLimits, s.cfg.NativePool)
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

// runNative prepares and starts the sandbox while it opens the run's
// channel on a socket owned by the run's host uid, then assigns the job,
// waits for the guest and destroys the sandbox.
func (s *Supervisor) runNative(ctx context.Context, b *broker.Broker, runID string, req Request, job sandbox.Job, runDir string) (*sandbox.Outcome, error) {
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
	defer func() { <-startDone; sb.Destroy() }()
	ids := sb.HostIDs()
	sock, err := rpc.ListenRunSocket(runDir, &rpc.Owner{UID: int(ids.Guest), GID: int(ids.Guest)})
	if err != nil {
		return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed), err
	}
	defer sock.Close()
	channelID, _ := newID("chn-")
	invocationID, _ := newID("inv-")
	ch, credential, err := s.channels.Open(rpc.ChannelConfig{
		ChannelID: channelID, InvocationID: invocationID, ExecutionID: runID, PlanSHA256: req.Plan.Identity(),
		Expiry: time.Now().Add(req.Limits.Timeout + time.Minute), PeerUID: ids.Guest, Dispatcher: b,
	})
	if err != nil {
		return failedOutcome(sandbox.StatusSetupFailed, native.CodeSetupFailed), err
	}
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
	if err := sb.Assign(job); err != nil {
		return outcomeOf(err), err
	}
	out, err := sb.Wait(ctx)
	if derr := sb.Destroy(); derr != nil && err == nil {
		err = derr
	}
	return out, err
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
		st.Ready, st.Taken, st.Cold, st.Discarded = p.Ready(), ps.Pooled, ps.Cold, ps.Discarded
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
