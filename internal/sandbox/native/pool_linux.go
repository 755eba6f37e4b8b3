package native

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// Pool is a sandbox.Backend that keeps sandboxes started ahead of their
// jobs, interpreter included: a pooled sandbox has every namespace, cgroup,
// mount and the seccomp filter in place, and its runner has started the
// interpreter and waits on the job pipe, having imported nothing of a job.
// A run then pays for Assign (the job's files and mounts, the handover),
// the script and the outcome; Destroy can follow off its path (Release).
// STARTUP.md has the figures. A pooled sandbox is confined exactly like one
// started for its job, which is the same code up to the handover; it is
// used once and destroyed.
//
// Sandboxes are kept per limits class: the limits with defaults applied,
// without the workspace bounds (the caller's, not the container's). The
// classes of PoolConfig.Limits start at once; other limits get a class on
// their first Take while fewer than MaxClasses exist (that run starts its
// own sandbox, as do runs that find their class empty). A sandbox no one
// takes within Idle is destroyed, a class not taken from within Idle is not
// refilled, and once empty it is dropped (its place is free for others).
// A class refills at once when a Take leaves it empty, else when the run
// that took a sandbox releases it; at most four sandboxes of a class start
// at once.
//
// Each started sandbox holds a host uid pair, an idle init and an idle
// interpreter (about 10 MiB charged to its memory cgroup). Close the Pool
// before its Backend.
type Pool struct {
	b    *Backend
	cfg  PoolConfig
	stop chan struct{}
	wg   sync.WaitGroup // fillers, the janitor, background destroys

	mu      sync.Mutex
	classes map[sandbox.Limits]*poolClass
	closed  bool
	lastErr error // the last failure to start a sandbox, nil once one succeeds
	stats   PoolStats
}

// PoolConfig configures a Pool.
type PoolConfig struct {
	// Size is how many sandboxes each class keeps started (at least 1).
	Size int
	// Limits are the classes started at once (none: classes start on
	// demand).
	Limits []sandbox.Limits
	// MaxClasses bounds how many classes exist at once; 0 means
	// max(1, len(Limits)).
	MaxClasses int
	// Idle is how long a started sandbox waits for a job before it is
	// destroyed, and how long a class is refilled after its last Take;
	// 0 means DefaultPoolIdle.
	Idle time.Duration
}

// DefaultPoolIdle is PoolConfig.Idle's default.
const DefaultPoolIdle = 5 * time.Minute

// PoolStats counts a Pool's sandboxes and Takes (every Run takes once).
type PoolStats struct {
	Started   int64 // sandboxes the pool started and saw ready
	Pooled    int64 // Takes that returned a started sandbox
	Cold      int64 // Takes that returned nil (no class, or none ready)
	Discarded int64 // pooled sandboxes found dead and destroyed unused
	Expired   int64 // pooled sandboxes destroyed unused after Idle
}

// poolClass is the state of one limits class (guarded by Pool.mu).
type poolClass struct {
	limits   sandbox.Limits
	ready    []pooled // oldest first
	starting int
	backoff  time.Duration // the pause after the last failure to start
	paused   bool          // no start during that pause
	lastUse  time.Time
	bell     chan struct{} // wakes the filler (capacity 1)
}

type pooled struct {
	s     *Sandbox
	since time.Time
}

var _ sandbox.Backend = (*Pool)(nil)

const (
	// poolRetry bounds the filler's pause after a failure to start a sandbox.
	poolRetry = 5 * time.Second
	// readyTimeout bounds the wait for a started runner to wait for its job.
	readyTimeout = 30 * time.Second
	// maxStarts bounds the sandboxes of a class starting at once: a start
	// spends much of its time waiting (the kernel's cgroup grace period,
	// the sync with the init), so a few in parallel refill a busy class.
	maxStarts = 4
)

// NewPool starts keeping sandboxes started as cfg says.
func (b *Backend) NewPool(cfg PoolConfig) (*Pool, error) {
	if cfg.Size < 1 {
		return nil, refused(CodeInvalidLimits, "pool size %d: at least 1", cfg.Size)
	}
	if cfg.MaxClasses == 0 {
		cfg.MaxClasses = max(1, len(cfg.Limits))
	}
	if cfg.Idle == 0 {
		cfg.Idle = DefaultPoolIdle
	}
	if cfg.MaxClasses < len(cfg.Limits) || cfg.Idle < 0 {
		return nil, refused(CodeInvalidLimits, "pool: %d classes for %d limits, idle %v", cfg.MaxClasses, len(cfg.Limits), cfg.Idle)
	}
	keys := make([]sandbox.Limits, len(cfg.Limits))
	for i, l := range cfg.Limits {
		k, err := classOf(l)
		if err != nil {
			return nil, err
		}
		keys[i] = k
	}
	p := &Pool{b: b, cfg: cfg, stop: make(chan struct{}), classes: map[sandbox.Limits]*poolClass{}}
	p.mu.Lock()
	for _, k := range keys {
		if p.classes[k] == nil {
			p.newClassLocked(k)
		}
	}
	p.mu.Unlock()
	p.wg.Add(1)
	go p.janitor()
	return p, nil
}

// classOf is the pool class of limits: defaults applied, the workspace
// bounds (which the supervisor applies, not the container) left out.
func classOf(l sandbox.Limits) (sandbox.Limits, error) {
	l, err := withDefaults(l)
	l.WorkspaceBytes, l.WorkspaceFiles = 0, 0
	return l, err
}

// newClassLocked adds a class and starts its filler.
func (p *Pool) newClassLocked(key sandbox.Limits) *poolClass {
	c := &poolClass{limits: key, lastUse: time.Now(), bell: make(chan struct{}, 1)}
	p.classes[key] = c
	p.wg.Add(1)
	go p.fill(c)
	return c
}

func ring(bell chan struct{}) {
	select {
	case bell <- struct{}{}:
	default:
	}
}

// Name implements sandbox.Backend.
func (p *Pool) Name() string { return "native" }

// fill keeps the class full while it is in use, up to maxStarts sandboxes
// starting at once, and drops the class once it is idle and empty.
func (p *Pool) fill(c *poolClass) {
	defer p.wg.Done()
	for {
		p.mu.Lock()
		active := time.Since(c.lastUse) < p.cfg.Idle
		for !p.closed && active && len(c.ready)+c.starting < p.cfg.Size && c.starting < maxStarts && !c.paused {
			c.starting++
			p.wg.Add(1)
			go p.startOne(c)
		}
		if !p.closed && !active && len(c.ready) == 0 && c.starting == 0 {
			delete(p.classes, c.limits)
			p.mu.Unlock()
			return
		}
		p.mu.Unlock()
		select {
		case <-c.bell:
		case <-p.stop:
			return
		}
	}
}

// startOne starts one sandbox for the class. After a failure the class
// starts nothing for a pause that doubles up to poolRetry.
func (p *Pool) startOne(c *poolClass) {
	defer p.wg.Done()
	defer ring(c.bell)
	s, err := p.start(c.limits)
	p.mu.Lock()
	p.lastErr = err
	if err != nil {
		c.backoff = min(max(2*c.backoff, 50*time.Millisecond), poolRetry)
		c.paused = true
		pause := c.backoff
		p.mu.Unlock()
		select {
		case <-time.After(pause):
		case <-p.stop:
		}
		p.mu.Lock()
		c.starting--
		c.paused = false
		p.mu.Unlock()
		return
	}
	defer p.mu.Unlock()
	c.starting--
	c.backoff = 0
	p.stats.Started++
	if p.closed {
		p.destroyLater(s)
		return
	}
	c.ready = append(c.ready, pooled{s, time.Now()})
}

// start prepares and starts a sandbox and waits until its runner waits for
// a job.
func (p *Pool) start(limits sandbox.Limits) (*Sandbox, error) {
	s, err := p.b.Prepare(context.Background(), limits)
	if err != nil {
		return nil, err
	}
	if err := s.Start(); err != nil {
		s.Destroy()
		return nil, err
	}
	if err := s.WaitReady(readyTimeout); err != nil {
		s.Destroy()
		return nil, err
	}
	return s, nil
}

// janitor destroys the sandboxes that waited longer than Idle, and wakes
// the fillers of classes that went idle, so that they drop them.
func (p *Pool) janitor() {
	defer p.wg.Done()
	tick := time.NewTicker(min(max(p.cfg.Idle/4, 10*time.Millisecond), 30*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-p.stop:
			return
		}
		p.mu.Lock()
		for _, c := range p.classes {
			n := 0
			for n < len(c.ready) && time.Since(c.ready[n].since) >= p.cfg.Idle {
				p.destroyLater(c.ready[n].s)
				n++
			}
			p.stats.Expired += int64(n)
			c.ready = c.ready[n:]
			if n > 0 || time.Since(c.lastUse) >= p.cfg.Idle {
				ring(c.bell)
			}
		}
		p.mu.Unlock()
	}
}

// destroyLater destroys s on a goroutine of its own; Close waits for it.
func (p *Pool) destroyLater(s *Sandbox) {
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		_ = s.Destroy()
	}()
}

// Run implements sandbox.Backend with a started sandbox of the class of
// limits when one is ready (Take), and as Backend.Run otherwise.
func (p *Pool) Run(ctx context.Context, job sandbox.Job, limits sandbox.Limits) (*sandbox.Outcome, error) {
	s := p.Take(limits)
	if s == nil {
		return p.b.Run(ctx, job, limits)
	}
	return s.finish(ctx, job)
}

// Take returns a started sandbox of the class of limits whose runner waits
// for its job, when one is ready; nil otherwise (then it may have made the
// class, to be filled for later Takes). The caller owns the sandbox:
// Assign, Wait, Release or Destroy. Its Timings count only what the run
// waits for from now on (Assign, the guest, Release or Destroy).
func (p *Pool) Take(limits sandbox.Limits) *Sandbox {
	key, err := classOf(limits)
	for err == nil {
		var got *Sandbox
		p.mu.Lock()
		c := p.classes[key]
		if c == nil && !p.closed && len(p.classes) < p.cfg.MaxClasses {
			c = p.newClassLocked(key)
		}
		if c != nil {
			c.lastUse = time.Now()
			if len(c.ready) > 0 {
				got = c.ready[0].s
				c.ready = c.ready[1:]
			}
			// A class left empty refills now (or wakes, if it was idle);
			// one with sandboxes left refills when this run releases its
			// sandbox, so that the run does not share the CPUs with the
			// start of its replacement.
			if got != nil && len(c.ready) > 0 {
				bell := c.bell
				got.onRelease = func() { ring(bell) }
			} else {
				ring(c.bell)
			}
		}
		if got == nil {
			p.stats.Cold++
		}
		p.mu.Unlock()
		if got == nil {
			return nil
		}
		// A pooled runner can die while it waits (killed from outside).
		if got.waitsForJob() {
			p.mu.Lock()
			p.stats.Pooled++
			p.mu.Unlock()
			got.timings = sandbox.Timings{}
			return got
		}
		p.mu.Lock()
		p.stats.Discarded++
		p.destroyLater(got)
		p.mu.Unlock()
	}
	p.mu.Lock()
	p.stats.Cold++
	p.mu.Unlock()
	return nil
}

// Stats returns the counts so far.
func (p *Pool) Stats() PoolStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stats
}

// Ready is how many started sandboxes wait for a job now, in all classes.
func (p *Pool) Ready() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, c := range p.classes {
		n += len(c.ready)
	}
	return n
}

// Classes is how many limits classes the pool keeps now.
func (p *Pool) Classes() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.classes)
}

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
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	close(p.stop)
	var left []*Sandbox
	for _, c := range p.classes {
		for _, r := range c.ready {
			left = append(left, r.s)
		}
		c.ready = nil
	}
	p.mu.Unlock()
	var errs []error
	for _, s := range left {
		if err := s.Destroy(); err != nil {
			errs = append(errs, err)
		}
	}
	p.wg.Wait()
	return errors.Join(errs...)
}
