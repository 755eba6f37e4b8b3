package wazero

import (
	"sync"
	"time"
)

// childPool keeps children loaded ahead of their runs (Config.Pool): each
// has started, mapped the image, compiled its module from the cache,
// started its guest (CPython and the runner, which waits for its job's
// files: startGuest) and written loadedByte, and waits on its job pipe,
// unconfined (its limits are the job's) and holding nothing of a job. A run takes one and hands
// it its job; the pool refills in the background, one child at a time,
// once that run has ended (at once when a run found none ready: watch).
// A child is used once: after its guest ran, its memory, descriptors and
// seccomp filter are that guest's. A child that ends while idle (killed
// from outside, or failing to load) is dropped, never handed a job. As the
// native pool's sandboxes, a child no run takes within idle is killed
// (each holds tens of MiB), and a pool no run has taken from within idle
// is not refilled until one does.
type childPool struct {
	in   *Interpreter
	size int
	idle time.Duration
	stop chan struct{}
	bell chan struct{} // wakes the filler (capacity 1)
	wg   sync.WaitGroup

	mu      sync.Mutex
	ready   []*child             // oldest first
	since   map[*child]time.Time // when each ready child had loaded
	lastUse time.Time            // the last take, or the pool's start
	filling *child               // the child the filler waits on to load
	closed  bool
	counts  PoolState // its counts; state adds Size and Ready
}

const (
	// poolMemoryBytes is a pooled child's memory limit until its job's
	// applies: its guest starts before there is a job (CPython's start and
	// the runner's imports grow it to 16 MiB: TestGuestStartsBeforeItsJob's
	// peak), and a job whose limit is lower gets a child started for it.
	poolMemoryBytes = 64 << 20
	// poolRetry bounds the filler's pause after a child that did not load.
	poolRetry = 5 * time.Second
	// poolRetryFirst is the first such pause.
	poolRetryFirst = 100 * time.Millisecond
)

// newChildPool starts keeping size children loaded for in, each for at
// most idle unless a run takes it.
func newChildPool(in *Interpreter, size int, idle time.Duration) *childPool {
	p := &childPool{in: in, size: size, idle: idle, stop: make(chan struct{}), bell: make(chan struct{}, 1),
		since: map[*child]time.Time{}, lastUse: time.Now()}
	p.wg.Add(2)
	go p.fill()
	go p.expire()
	return p
}

// take returns a loaded child, alive when looked at, or nil (no pool, or
// none ready: the run starts its own).
func (p *childPool) take() *child {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.lastUse = time.Now()
	for len(p.ready) > 0 {
		c := p.ready[0]
		p.ready = p.ready[1:]
		delete(p.since, c)
		select {
		case <-c.done: // reaped: it died while idle
			p.counts.Discarded++
			continue
		default:
		}
		p.counts.Taken++
		return c // watch refills once it is reaped
	}
	p.counts.Cold++
	p.ring() // behind: refill now
	return nil
}

func (p *childPool) ring() {
	select {
	case p.bell <- struct{}{}:
	default:
	}
}

// fill keeps the pool full: one child started at a time, added once it has
// loaded; after one that did not load, a pause (doubling up to poolRetry).
func (p *childPool) fill() {
	defer p.wg.Done()
	pause := poolRetryFirst
	for {
		p.mu.Lock()
		// An unused pool is full: it waits for a take to ring.
		closed, full := p.closed, len(p.ready) >= p.size || time.Since(p.lastUse) >= p.idle
		p.mu.Unlock()
		if closed {
			return
		}
		if full {
			select {
			case <-p.bell:
			case <-p.stop:
			}
			continue
		}
		if p.load() {
			pause = poolRetryFirst
			continue
		}
		select {
		case <-time.After(pause):
		case <-p.stop:
		}
		pause = min(2*pause, poolRetry)
	}
}

// load starts a child and adds it to the pool once it has loaded; false
// if it did not (killed, and reaped, unless it died by itself first).
func (p *childPool) load() bool {
	c, err := p.in.spawnChild(poolMemoryBytes)
	if err != nil {
		return false
	}
	p.mu.Lock()
	p.filling = c
	p.mu.Unlock()
	timer := time.NewTimer(childLoadBound)
	defer timer.Stop()
	select {
	case <-c.loaded:
	case <-timer.C:
	case <-p.stop:
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.filling = nil
	select {
	case <-c.loaded:
		if c.isLoaded && !p.closed {
			p.ready = append(p.ready, c)
			p.since[c] = time.Now()
			p.counts.Loaded++
			go p.watch(c)
			return true
		}
	default:
	}
	c.kill()
	c.discard()
	return false
}

// watch waits until c is reaped: dropped if it was idle, else its run has
// ended; either way the pool refills now. Not at the take: a child's load
// (about half a second of CPU) beside the run that took its place made
// that run slower on two cores (an empty one 207-287 ms against 163-165,
// BenchmarkWazeroPoolRunEmpty).
func (p *childPool) watch(c *child) {
	<-c.done
	p.mu.Lock()
	defer p.mu.Unlock()
	defer p.ring()
	for i, r := range p.ready {
		if r == c {
			p.ready = append(p.ready[:i:i], p.ready[i+1:]...)
			delete(p.since, c)
			p.counts.Discarded++
			return
		}
	}
}

// expire kills the children that waited longer than idle (the filler
// replaces them only while runs take from the pool).
func (p *childPool) expire() {
	defer p.wg.Done()
	tick := time.NewTicker(min(max(p.idle/4, 10*time.Millisecond), 30*time.Second))
	defer tick.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-tick.C:
		}
		p.mu.Lock()
		var old []*child
		for len(p.ready) > 0 && time.Since(p.since[p.ready[0]]) >= p.idle {
			old = append(old, p.ready[0])
			delete(p.since, p.ready[0])
			p.ready = p.ready[1:]
			p.counts.Expired++
		}
		p.mu.Unlock()
		for _, c := range old {
			c.kill()
			c.discard()
		}
		if len(old) > 0 {
			p.ring()
		}
	}
}

// close kills the idle children and waits until each is reaped, and the
// filler has stopped: nothing of the pool is left.
func (p *childPool) close() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	idle := p.ready
	p.ready, p.since = nil, nil
	if p.filling != nil {
		p.filling.kill()
	}
	p.mu.Unlock()
	close(p.stop)
	for _, c := range idle {
		c.kill()
		c.discard()
	}
	p.wg.Wait()
}

// pids are the processes of the pool's children, idle or loading.
func (p *childPool) pids() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var pids []int
	for _, c := range p.ready {
		pids = append(pids, c.cmd.Process.Pid)
	}
	if p.filling != nil {
		pids = append(pids, p.filling.cmd.Process.Pid)
	}
	return pids
}

// state is the pool's PoolState.
func (p *childPool) state() PoolState {
	if p == nil {
		return PoolState{}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.counts
	st.Size, st.Ready = p.size, len(p.ready)
	return st
}
