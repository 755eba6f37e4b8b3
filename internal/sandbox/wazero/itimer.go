package wazero

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/tetratelabs/wazero/api"
)

// The guest's interval timers: setitimer and getitimer, alarm and pause,
// which WASI lacks with signals, and which scripts use to bound a
// computation (signal.alarm(5) and a SIGALRM handler that raises). The
// WASI build's functions (python/wasi/_apysup_signal.c) call
// apysup_proc.itimer, and the timers run here, on the host.
//
// A due timer is delivered as the kernel delivers a signal between two
// instructions: from the timer's goroutine, the host stores 1 in three of
// the four words of the guest's linear memory whose addresses the guest
// gave it
// (the guest's own "due" flag, and the interpreter's signals_pending and
// eval_breaker, as CPython's own signal handler sets them), so that the
// eval loop, at its next check, calls CPython's signal check, where the
// build raises SIGALRM: a handler runs, SIG_IGN drops it, the default ends
// the guest as natively (killed_by_signal:SIGALRM). Nothing but those
// stores crosses into the guest from another goroutine; they are atomic,
// aligned, and inside the guest's memory, whatever the guest gave.
//
// A time.sleep the timer is due in is woken (the guest marks the sleep in
// its fourth word) and ends with EINTR, as natively; other waits (a
// select's timeout) run to their end first, where natively they would be
// interrupted and then resumed (PEP 475), so a handler runs later there.
//
// ITIMER_VIRTUAL and ITIMER_PROF count the guest's CPU time (its thread's
// user time, and user and system time) and deliver SIGVTALRM and SIGPROF
// the same way. A goroutine watches the guest thread's CPU clock, which
// Linux lets any thread of the process read: it waits the CPU time left
// as wall time (a thread cannot spend more), reads the clock again, and
// delivers once it is past. Elsewhere they are refused (EINVAL).

const (
	itimerName    = "itimer"
	itimerReal    = 0
	itimerVirtual = 1
	itimerProf    = 2
	itimerKinds   = 3
	// minInterval is the shortest period the host re-arms the timer for,
	// whatever interval the guest asked for (getitimer still reads the
	// asked one): Linux's default timer slack for a normal process. A
	// guest asking for 1 ns would otherwise keep the host's timer
	// goroutine firing without pause.
	minInterval = 50 * time.Microsecond
)

// The guest's words, in the order it gives their addresses.
const (
	wordDue = iota
	wordPending
	wordBreaker
	wordSleeping
	timerWords
)

// timerKey carries a guest's *guestTimers from startGuest to hostItimer.
type timerKey struct{}

// guestTimers are one guest's three interval timers, by kind.
type guestTimers [itimerKinds]*guestTimer

func newGuestTimers(mem *linearMemory, cpu *guestCPU) *guestTimers {
	var ts guestTimers
	for kind := range ts {
		ts[kind] = &guestTimer{kind: kind, mem: mem, cpu: cpu, fired: make(chan struct{}, 1)}
	}
	return &ts
}

// stop disarms the timers for good: the guest has ended.
func (ts *guestTimers) stop() {
	for _, t := range ts {
		t.stop()
	}
}

// guestTimer is one of a guest's interval timers.
type guestTimer struct {
	kind  int
	mem   *linearMemory
	cpu   *guestCPU     // the guest's thread, for the CPU-time kinds
	fired chan struct{} // a token per firing, at most one waiting: wakes a sleep

	mu          sync.Mutex
	timer       *time.Timer   // ITIMER_REAL's
	done        chan struct{} // closed to end a CPU-time timer's watcher
	gen         uint64        // the arming a timer's function or watcher belongs to
	armed       bool
	deadline    time.Time // ITIMER_REAL's
	cpuDeadline int64     // the CPU-time kinds', on the thread's clock
	interval    time.Duration
	words       [timerWords]uint32
	stopped     bool
	looks       int // the CPU-time watch's reads of the clock (its tests)
}

// clock reads the guest thread's CPU clock of t's kind.
func (t *guestTimer) clock() (int64, bool) {
	return threadCPUOf(t.cpu.thread.Load(), t.kind == itimerVirtual)
}

// left is the time left until t is due, never none while armed. Called
// with t.mu held.
func (t *guestTimer) left(now time.Time) time.Duration {
	if !t.armed {
		return 0
	}
	left := t.deadline.Sub(now)
	if t.kind != itimerReal {
		c, _ := t.clock()
		left = time.Duration(t.cpuDeadline - c)
	}
	return max(left, time.Nanosecond)
}

// disarm stops what the current arming started. Called with t.mu held.
func (t *guestTimer) disarm() {
	t.gen++
	t.armed, t.interval = false, 0
	if t.timer != nil {
		t.timer.Stop()
		t.timer = nil
	}
	if t.done != nil {
		close(t.done)
		t.done = nil
	}
}

// set returns the time left and the interval, as setitimer's old value,
// and, if arm, arms the timer for value and then every interval, or
// disarms it when value is 0. ok is false for a CPU-time timer whose
// clock cannot be read (not on Linux).
func (t *guestTimer) set(now time.Time, value, interval time.Duration, arm bool, words [timerWords]uint32) (left, was time.Duration, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.kind != itimerReal {
		if _, ok := t.clock(); !ok {
			return 0, 0, false
		}
	}
	left, was = t.left(now), 0
	if t.armed {
		was = t.interval
	}
	if !arm {
		return left, was, true
	}
	t.disarm()
	t.words = words
	if value <= 0 || t.stopped {
		return left, was, true
	}
	t.armed, t.interval = true, interval
	gen := t.gen
	if t.kind == itimerReal {
		t.deadline = now.Add(value)
		t.timer = time.AfterFunc(value, func() { t.fire(gen) })
		return left, was, true
	}
	c, _ := t.clock()
	t.cpuDeadline = c + int64(value)
	t.done = make(chan struct{})
	go t.watch(gen, t.done)
	return left, was, true
}

// deliver stores the guest's words and wakes a sleep. Called with t.mu
// held.
func (t *guestTimer) deliver() {
	for _, w := range []int{wordDue, wordPending, wordBreaker} {
		t.mem.setWord(t.words[w])
	}
	select {
	case t.fired <- struct{}{}:
	default:
	}
}

// fire delivers ITIMER_REAL armed as gen, and arms its next interval.
func (t *guestTimer) fire(gen uint64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped || gen != t.gen || !t.armed {
		return // disarmed or armed again since
	}
	t.deliver()
	if t.interval <= 0 {
		t.armed = false
		return
	}
	now := time.Now()
	period := max(t.interval, minInterval)
	if t.deadline = t.deadline.Add(period); t.deadline.Before(now) {
		t.deadline = now.Add(period) // overruns fold into one, as a pending signal does
	}
	t.timer = time.AfterFunc(t.deadline.Sub(now), func() { t.fire(gen) })
}

// cpuTick is how often, at most, the host looks at the guest's CPU clock
// for its CPU-time timers: Linux checks them at its scheduler's tick (1 to
// 4 ms), so a virtual or profiling timer never fires finer there. A guest
// that sleeps with such a timer of a microsecond armed had the host's
// watch wake every 50 us to find no CPU spent: a second of host CPU for 8
// of the guest's sleep (the fifth hostile-guest hunt). While the clock
// stands still the watch waits twice as long each time, up to idleTick.
const (
	cpuTick  = time.Millisecond
	idleTick = 16 * time.Millisecond
)

// watch delivers a CPU-time timer armed as gen, and its intervals, until
// done is closed or the guest's thread is gone.
func (t *guestTimer) watch(gen uint64, done chan struct{}) {
	last, idle := int64(-1), cpuTick
	for {
		t.mu.Lock()
		if t.stopped || gen != t.gen || !t.armed {
			t.mu.Unlock()
			return
		}
		c, ok := t.clock()
		if !ok {
			t.mu.Unlock()
			return
		}
		t.looks++
		if c >= t.cpuDeadline {
			t.deliver()
			if t.interval <= 0 {
				t.armed = false
				t.mu.Unlock()
				return
			}
			period := int64(max(t.interval, minInterval))
			if t.cpuDeadline += period; t.cpuDeadline <= c {
				t.cpuDeadline = c + period
			}
		}
		// The thread cannot spend CPU faster than wall time passes; with
		// none spent since the last look, the guest waits.
		wait := max(time.Duration(t.cpuDeadline-c), cpuTick)
		if c == last {
			idle = min(2*idle, idleTick)
			wait = max(wait, idle)
		} else {
			idle = cpuTick
		}
		last = c
		t.mu.Unlock()
		tm := time.NewTimer(wait)
		select {
		case <-done:
			tm.Stop()
			return
		case <-tm.C:
		}
	}
}

// interrupts reports whether a firing should end the guest's sleep: the
// timer is due and the guest is in time.sleep.
func (t *guestTimer) interrupts() bool {
	t.mu.Lock()
	words := t.words
	t.mu.Unlock()
	return t.mem.word(words[wordDue]) != 0 && t.mem.word(words[wordSleeping]) != 0
}

// stop disarms the timer for good: the guest has ended.
func (t *guestTimer) stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.disarm()
}

// hostItimer is apysup_proc.itimer(which, set, value_ns, interval_ns,
// old_ptr, words_ptr) -> 0, or 1 for a timer there is not (EINVAL): it
// writes the time left and the interval (two i64) at old_ptr, and if set,
// arms timer which with the four word addresses at words_ptr.
func hostItimer(ctx context.Context, mod api.Module, stack []uint64) {
	which, set := api.DecodeI32(stack[0]), api.DecodeI32(stack[1]) != 0
	value, interval := int64(stack[2]), int64(stack[3])
	oldPtr, wordsPtr := api.DecodeU32(stack[4]), api.DecodeU32(stack[5])
	ts, ok := ctx.Value(timerKey{}).(*guestTimers)
	if !ok || which < 0 || which >= itimerKinds || value < 0 || interval < 0 {
		stack[0] = 1
		return
	}
	var words [timerWords]uint32
	for i := range words {
		if words[i], ok = mod.Memory().ReadUint32Le(wordsPtr + 4*uint32(i)); !ok {
			panic(fmt.Errorf("%s.%s: words out of range", procModule, itimerName))
		}
	}
	left, was, ok := ts[which].set(time.Now(), time.Duration(value), time.Duration(interval), set, words)
	if !ok {
		stack[0] = 1
		return
	}
	if !mod.Memory().WriteUint64Le(oldPtr, uint64(left)) || !mod.Memory().WriteUint64Le(oldPtr+8, uint64(was)) {
		panic(fmt.Errorf("%s.%s: old value out of range", procModule, itimerName))
	}
	stack[0] = 0
}

// setWord stores 1 in the guest's aligned 32-bit word at off, from any
// goroutine, as a signal handler stores a flag; an offset outside the
// memory, or unaligned, is ignored (the guest gave it).
func (m *linearMemory) setWord(off uint32) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off%4 == 0 && uint64(off)+4 <= uint64(len(m.mapping)) {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(&m.mapping[off])), 1)
	}
}

// word loads the guest's aligned 32-bit word at off (0 outside the memory).
func (m *linearMemory) word(off uint32) uint32 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if off%4 == 0 && uint64(off)+4 <= uint64(len(m.mapping)) {
		return atomic.LoadUint32((*uint32)(unsafe.Pointer(&m.mapping[off])))
	}
	return 0
}
