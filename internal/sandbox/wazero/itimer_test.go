package wazero

import (
	"testing"
	"time"

	"github.com/apysup/apysup/internal/testenv"
)

func timerOn(t *testing.T) (*guestTimer, *linearMemory, [timerWords]uint32) {
	t.Helper()
	mem := &linearMemory{mapping: make([]byte, 4096)}
	return newGuestTimers(mem, &guestCPU{})[itimerReal], mem, [timerWords]uint32{64, 128, 256, 512}
}

func waitFired(t *testing.T, g *guestTimer, within time.Duration) {
	t.Helper()
	select {
	case <-g.fired:
	case <-time.After(within):
		t.Fatalf("the timer did not fire within %s", within)
	}
}

// A due timer sets the guest's due flag and the interpreter's two words,
// and says so on fired; then it is disarmed, or armed for its interval.
func TestGuestTimerFires(t *testing.T) {
	g, mem, words := timerOn(t)
	defer g.stop()
	if left, was, _ := g.set(time.Now(), 20*time.Millisecond, 0, true, words); left != 0 || was != 0 {
		t.Fatalf("a fresh timer had %s left, interval %s", left, was)
	}
	if left, _, _ := g.set(time.Now(), 0, 0, false, words); left <= 0 || left > 20*time.Millisecond {
		t.Fatalf("armed for 20ms, %s left", left)
	}
	waitFired(t, g, 10*time.Second)
	for _, w := range []int{wordDue, wordPending, wordBreaker} {
		if mem.word(words[w]) != 1 {
			t.Errorf("word %d not set", w)
		}
	}
	if mem.word(words[wordSleeping]) != 0 {
		t.Error("the sleeping word was set by the host")
	}
	if left, was, _ := g.set(time.Now(), 0, 0, false, words); left != 0 || was != 0 {
		t.Fatalf("fired once: %s left, interval %s", left, was)
	}
	if g.interrupts() {
		t.Error("interrupts a guest that is not sleeping")
	}
	mem.setWord(words[wordSleeping])
	if !g.interrupts() {
		t.Error("does not interrupt a sleeping guest it is due for")
	}

	// An interval: it fires again after each due flag the guest clears.
	g.set(time.Now(), 10*time.Millisecond, 10*time.Millisecond, true, words)
	for range 3 {
		waitFired(t, g, 10*time.Second)
	}
	if _, was, _ := g.set(time.Now(), 0, 0, true, words); was != 10*time.Millisecond {
		t.Errorf("disarming: interval %s", was)
	}
	drain(g)
	time.Sleep(50 * time.Millisecond)
	select {
	case <-g.fired:
		t.Error("fired after it was disarmed")
	default:
	}
}

func drain(g *guestTimer) {
	for {
		select {
		case <-g.fired:
		default:
			return
		}
	}
}

// Arming again, and stopping, make the earlier arming's firing nothing.
func TestGuestTimerRearmAndStop(t *testing.T) {
	g, mem, words := timerOn(t)
	g.set(time.Now(), 20*time.Millisecond, 0, true, words)
	g.set(time.Now(), time.Hour, 0, true, words)
	time.Sleep(80 * time.Millisecond)
	if mem.word(words[wordDue]) != 0 {
		t.Error("the first arming fired after the second")
	}
	if left, _, _ := g.set(time.Now(), 0, 0, false, words); left < 59*time.Minute {
		t.Errorf("re-armed for an hour, %s left", left)
	}
	g.stop()
	if left, _, _ := g.set(time.Now(), 10*time.Millisecond, 0, true, words); left != 0 {
		t.Errorf("stopped, %s left", left)
	}
	time.Sleep(50 * time.Millisecond)
	if mem.word(words[wordDue]) != 0 {
		t.Error("a stopped timer fired")
	}
}

// Word offsets come from the guest: unaligned or outside its memory, the
// host stores nothing.
func TestGuestTimerWordsOutsideMemory(t *testing.T) {
	mem := &linearMemory{mapping: make([]byte, 4096)}
	for _, off := range []uint32{4093, 4094, 4096, 1 << 31, 0xfffffffc} {
		mem.setWord(off)
		if mem.word(off) != 0 {
			t.Errorf("offset %d stored", off)
		}
	}
	for i, b := range mem.mapping {
		if b != 0 {
			t.Fatalf("byte %d written", i)
		}
	}
	mem.setWord(4092)
	if mem.word(4092) != 1 || mem.mapping[4092] != 1 {
		t.Error("the last word was not stored, little-endian")
	}
	var empty linearMemory
	empty.setWord(0) // freed: nothing to store into
}

// An interval shorter than minInterval fires no more often than it.
func TestGuestTimerMinimumInterval(t *testing.T) {
	g, _, words := timerOn(t)
	defer g.stop()
	g.set(time.Now(), time.Nanosecond, time.Nanosecond, true, words)
	fired := 0
	deadline := time.After(100 * time.Millisecond)
	for done := false; !done; {
		select {
		case <-g.fired:
			fired++
		case <-deadline:
			done = true
		}
	}
	if _, was, _ := g.set(time.Now(), 0, 0, false, words); was != time.Nanosecond {
		t.Errorf("the interval reads %s, not the 1ns asked", was)
	}
	if limit := int(100*time.Millisecond/minInterval) + 2; fired == 0 || fired > limit {
		t.Errorf("fired %d times in 100ms, want 1..%d", fired, limit)
	}
}

// The CPU-time timers count the guest thread's CPU, read from the
// watcher's goroutine: one that is due while the guest computes sets its
// words; none runs while the thread does not.
func TestGuestTimerCPU(t *testing.T) {
	_, ok := threadCPUOf(currentThread(), false)
	testenv.Need(t, ok, "per-thread CPU clocks (Linux): elsewhere the CPU-time timers are refused")
	for _, kind := range []int{itimerVirtual, itimerProf} {
		mem := &linearMemory{mapping: make([]byte, 4096)}
		cpu := &guestCPU{}
		ts := newGuestTimers(mem, cpu)
		g, words := ts[kind], [timerWords]uint32{64, 128, 256, 512}
		if _, _, ok := g.set(time.Now(), 20*time.Millisecond, 0, true, words); ok {
			t.Fatalf("kind %d: armed with no guest thread", kind)
		}
		var fired bool
		spent := cpu.run(func() {
			if _, _, ok := g.set(time.Now(), 20*time.Millisecond, 0, true, words); !ok {
				t.Errorf("kind %d: not armed", kind)
				return
			}
			if left, _, _ := g.set(time.Now(), 0, 0, false, words); left <= 0 || left > 20*time.Millisecond {
				t.Errorf("kind %d: armed for 20ms of CPU, %s left", kind, left)
			}
			deadline := time.Now().Add(10 * time.Second)
			for x := 0; time.Now().Before(deadline); x++ {
				if mem.word(words[wordDue]) != 0 {
					fired = true
					return
				}
			}
		})
		ts.stop()
		if !fired || mem.word(words[wordBreaker]) != 1 {
			t.Errorf("kind %d: not delivered after %s of CPU", kind, time.Duration(spent))
		}
		// The user-time clock moves at the kernel's ticks (up to 10 ms
		// apart), as natively ITIMER_VIRTUAL does.
		if spent < int64(10*time.Millisecond) {
			t.Errorf("kind %d: delivered after %s of CPU, well before the 20ms it was armed for", kind, time.Duration(spent))
		}
	}
}

// A CPU-time timer of a microsecond armed by a guest that then sleeps does
// not keep the host's watch busy: it looks at the CPU clock at most every
// millisecond, and less often while none is spent (it looked every 50 us:
// 4,000 times in 200 ms).
func TestGuestTimerCPUWatchIdles(t *testing.T) {
	_, ok := threadCPUOf(currentThread(), false)
	testenv.Need(t, ok, "per-thread CPU clocks (Linux): elsewhere the CPU-time timers are refused")
	mem := &linearMemory{mapping: make([]byte, 4096)}
	cpu := &guestCPU{}
	ts := newGuestTimers(mem, cpu)
	g, words := ts[itimerVirtual], [timerWords]uint32{64, 128, 256, 512}
	cpu.run(func() {
		if _, _, ok := g.set(time.Now(), time.Microsecond, time.Microsecond, true, words); !ok {
			t.Error("not armed")
			return
		}
		time.Sleep(200 * time.Millisecond)
	})
	ts.stop()
	g.mu.Lock()
	looks := g.looks
	g.mu.Unlock()
	if looks > 200 {
		t.Errorf("the watch looked at the CPU clock %d times in 200 ms of the guest's sleep", looks)
	}
	t.Logf("%d looks", looks)
}

// FuzzGuestTimer: whatever a guest asks of apysup_proc.itimer (a timer, a
// value and an interval hostItimer let through, any four word offsets),
// the timer answers a time left and an interval that are not negative,
// and its stores land only on aligned words inside the guest's memory.
func FuzzGuestTimer(f *testing.F) {
	f.Add(uint8(0), int64(1000), int64(0), uint32(64), uint32(128), uint32(256), uint32(512))
	f.Add(uint8(0), int64(1), int64(1), uint32(4093), uint32(4096), uint32(1<<31), uint32(0xffffffff))
	f.Add(uint8(1), int64(1<<62), int64(1<<62), uint32(0), uint32(4), uint32(8), uint32(12))
	f.Fuzz(func(t *testing.T, kind uint8, value, interval int64, w0, w1, w2, w3 uint32) {
		if value < 0 || interval < 0 {
			return // hostItimer refuses them before set
		}
		mem := &linearMemory{mapping: make([]byte, 4096)}
		ts := newGuestTimers(mem, &guestCPU{})
		defer ts.stop()
		words := [timerWords]uint32{w0, w1, w2, w3}
		g := ts[int(kind)%itimerKinds]
		armed := false
		for _, arm := range []bool{true, false} {
			left, was, ok := g.set(time.Now(), time.Duration(value)%time.Millisecond, time.Duration(interval), arm, words)
			if ok && (left < 0 || was < 0) {
				t.Fatalf("left %s, interval %s", left, was)
			}
			armed = armed || (arm && ok)
		}
		if !armed {
			return // a CPU-time timer without a guest thread: refused
		}
		g.mu.Lock()
		g.deliver()
		g.mu.Unlock()
		for _, w := range []int{wordDue, wordPending, wordBreaker} { // the sleeping word is the guest's
			off := words[w]
			inside := off%4 == 0 && uint64(off)+4 <= uint64(len(mem.mapping))
			if got := mem.word(off); inside != (got == 1) {
				t.Fatalf("word at %d: %d (inside the memory and aligned: %v)", off, got, inside)
			}
		}
	})
}
