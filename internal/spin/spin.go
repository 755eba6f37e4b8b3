package spin

import (
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Readable polls the descriptor behind rc until it has bytes to read (or
// its peer closed), or window has passed, and says which. yield, when not
// nil, runs between polls: a goroutine that shares its P gives it up there.
func Readable(rc syscall.RawConn, window time.Duration, yield func()) bool {
	ready := false
	deadline := time.Now().Add(window)
	// Inside Control the descriptor stays rc's, whoever closes it meanwhile.
	err := rc.Control(func(fd uintptr) {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(p, 0)
			if n > 0 || (err != nil && err != unix.EINTR) {
				ready = n > 0
				return
			}
			if !time.Now().Before(deadline) {
				return
			}
			if yield != nil {
				yield()
			}
		}
	})
	return err == nil && ready
}

// Adaptive decides whether a server polls for its peer's next request:
// while the requests come within Window of the answers before them. It
// starts off: a peer's first request comes after its start, far later.
// Its methods may be called from several goroutines.
type Adaptive struct {
	Window time.Duration
	// Budget, when not nil, is how many windows may still be polled, by
	// this Adaptive and every other that holds the same counter: a peer
	// that times its requests to keep the server polling gets no more.
	Budget *atomic.Int64

	on       atomic.Bool
	answered atomic.Int64 // when the last answer went out, in Unix nanoseconds
}

// Wait polls rc for the next request, when the last one came that soon
// after its answer and the budget allows; it returns either way, and the
// caller reads.
func (a *Adaptive) Wait(rc syscall.RawConn, yield func()) {
	if !a.on.Load() {
		return
	}
	if a.Budget != nil && a.Budget.Add(-1) < 0 {
		a.on.Store(false)
		return
	}
	a.on.Store(Readable(rc, a.Window, yield))
}

// Arrived records that a request was read at now: one that came within
// the window of the last answer turns the polling (back) on.
func (a *Adaptive) Arrived(now time.Time) {
	if at := a.answered.Load(); at != 0 && now.UnixNano()-at < int64(a.Window) {
		a.on.Store(true)
	}
}

// Answered records that an answer went out at now.
func (a *Adaptive) Answered(now time.Time) { a.answered.Store(now.UnixNano()) }

// On says whether the next Wait polls.
func (a *Adaptive) On() bool { return a.on.Load() }
