package native

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/opencontainers/runc/libcontainer"

	"github.com/apysup/apysup/internal/sandbox"
)

// Pool is a sandbox.Backend that keeps sandboxes started ahead of their
// jobs, all with one set of limits: a run then pays for Assign, the guest
// and Destroy, not for building the confinement (STARTUP.md has the
// figures). A pooled sandbox is confined exactly like one started for its
// job; its init waits, before exec, inside every namespace, cgroup and
// seccomp filter of the run. Runs with other limits, and runs that find
// the pool empty, start a sandbox of their own as Backend.Run does.
//
// Each started sandbox holds a host uid pair and an idle init process
// (3 MiB charged to its own memory cgroup here; 10 MiB resident, most of it
// the supervisor binary's shared pages). Close the Pool before its Backend.
type Pool struct {
	b      *Backend
	limits sandbox.Limits // with defaults applied
	size   int
	ready  chan *Sandbox // started sandboxes
	slots  chan struct{} // one per sandbox started or starting
	stop   chan struct{}
	done   chan struct{}
	close  sync.Once
	// prestart adjusts a sandbox before it starts (benchmarks, tests).
	prestart func(*Sandbox)

	mu      sync.Mutex
	lastErr error // the filler's last failure, nil once one succeeds
	stats   PoolStats
}

// PoolStats counts a Pool's Takes (every Run takes once).
type PoolStats struct {
	Pooled    int64 // Takes that returned a started sandbox
	Cold      int64 // Takes that returned nil (other limits, or none ready)
	Discarded int64 // pooled sandboxes found dead and destroyed unused
}

var _ sandbox.Backend = (*Pool)(nil)

// poolRetry bounds the filler's pause after a failure to start a sandbox.
const poolRetry = 5 * time.Second

// NewPool starts keeping size sandboxes with the given limits started.
func (b *Backend) NewPool(limits sandbox.Limits, size int) (*Pool, error) {
	return b.newPool(limits, size, nil)
}

func (b *Backend) newPool(limits sandbox.Limits, size int, prestart func(*Sandbox)) (*Pool, error) {
	l, err := withDefaults(limits)
	if err != nil {
		return nil, err
	}
	if size < 1 {
		return nil, refused(CodeInvalidLimits, "pool size %d: at least 1", size)
	}
	p := &Pool{b: b, limits: l, size: size, prestart: prestart,
		ready: make(chan *Sandbox, size), slots: make(chan struct{}, size),
		stop: make(chan struct{}), done: make(chan struct{})}
	go p.fill()
	return p, nil
}

// Name implements sandbox.Backend.
func (p *Pool) Name() string { return "native" }

// fill starts a sandbox whenever one of the size slots is free.
func (p *Pool) fill() {
	defer close(p.done)
	pause := 50 * time.Millisecond
	for {
		select {
		case p.slots <- struct{}{}:
		case <-p.stop:
			return
		}
		s, err := p.start()
		p.mu.Lock()
		p.lastErr = err
		p.mu.Unlock()
		if err != nil {
			<-p.slots
			select {
			case <-time.After(pause):
				pause = min(2*pause, poolRetry)
			case <-p.stop:
				return
			}
			continue
		}
		pause = 50 * time.Millisecond
		p.ready <- s // never blocks: a slot was taken for it
	}
}

func (p *Pool) start() (*Sandbox, error) {
	s, err := p.b.Prepare(context.Background(), p.limits)
	if err != nil {
		return nil, err
	}
	if p.prestart != nil {
		p.prestart(s)
	}
	if err := s.Start(); err != nil {
		s.Destroy()
		return nil, err
	}
	return s, nil
}

// Run implements sandbox.Backend with a started sandbox when the limits
// match and one is ready (Take), and as Backend.Run otherwise.
func (p *Pool) Run(ctx context.Context, job sandbox.Job, limits sandbox.Limits) (*sandbox.Outcome, error) {
	s := p.Take(limits)
	if s == nil {
		return p.b.Run(ctx, job, limits)
	}
	return s.finish(ctx, job)
}

// Take returns a started sandbox whose init still waits, when limits (with
// defaults applied) are the pool's and one is ready; nil otherwise. The
// caller owns it: Assign, Wait, Destroy. Its Timings count only what the
// run waits for from now on (Assign, the release of the guest, the guest,
// Destroy).
func (p *Pool) Take(limits sandbox.Limits) *Sandbox {
	var s *Sandbox
	if l, err := withDefaults(limits); err == nil && l == p.limits {
		s = p.take()
	}
	p.mu.Lock()
	if s != nil {
		p.stats.Pooled++
	} else {
		p.stats.Cold++
	}
	p.mu.Unlock()
	if s != nil {
		s.timings = sandbox.Timings{}
	}
	return s
}

// Stats returns the counts so far.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// take returns a started sandbox whose init still waits, or nil.
func (p *Pool) take() *Sandbox {
	for {
		var s *Sandbox
		select {
		case s = <-p.ready:
			<-p.slots // the filler starts the next one now
		default:
			return nil
		}
		// A pooled init can die while it waits (killed from outside).
		if st, err := s.container.Status(); err == nil && st == libcontainer.Created {
			return s
		}
		p.mu.Lock()
		p.stats.Discarded++
		p.mu.Unlock()
		s.Destroy()
	}
}

// Ready is how many started sandboxes wait for a job now.
func (p *Pool) Ready() int { return len(p.ready) }

// Err is why the pool last failed to start a sandbox (nil after a success).
// Runs do not depend on it: without a pooled sandbox they start their own
// and report that start's typed error.
func (p *Pool) Err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.lastErr
}

// Close stops filling and destroys the sandboxes that wait. Runs in flight
// are not affected; later Runs start their own sandboxes.
func (p *Pool) Close() error {
	var errs []error
	p.close.Do(func() {
		close(p.stop)
		<-p.done
		for drained := false; !drained; {
			select {
			case s := <-p.ready:
				if err := s.Destroy(); err != nil {
					errs = append(errs, err)
				}
			default:
				drained = true
			}
		}
	})
	return errors.Join(errs...)
}
