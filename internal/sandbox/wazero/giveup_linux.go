package wazero

import (
	"bufio"
	"context"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/callctx"
)

// A call the guest gives up (a timer's handler raised while it waited)
// is canceled in the Broker at once, as natively: the native bridge's
// connection closes with the exception, and the channel server's
// background read cancels the request's context. The child says so on
// the call socket (faultGiveUp, no frame) while its parent answers the
// call. The parent answers a call on the goroutine that reads the socket,
// so a call not answered within giveUpWatchAfter gets a watcher: a
// goroutine that waits for the socket to become readable, reads the one
// message that comes, and cancels the call if it is the give-up. Most
// calls are answered sooner and cost a timer.

// giveUpWatchAfter is how long a call runs before its give-up is watched
// for: longer than the Broker takes to answer a call that needs no human
// and no network (20-60 us), far shorter than the waits a guest gives up
// (a human's approval, a slow provider).
const giveUpWatchAfter = time.Millisecond

// pendingCall is a message the watcher read that is not its call's
// give-up, left to the reading loop: a call that came without one (a
// child is no more trusted than its guest), or the socket's end.
type pendingCall struct {
	frame []byte
	fault string
	err   error
}

// callWatch watches one child's call socket for give-ups. Its methods
// run on the goroutine that reads the socket.
type callWatch struct {
	calls *bufio.Reader
	rc    syscall.RawConn // nil: nothing is watched
	// stop wakes a watcher once its call is answered: an eventfd, made at
	// the child's first call (-1 before, or if it could not be made).
	stop int
}

func newCallWatch(calls *bufio.Reader, rc syscall.RawConn) *callWatch {
	return &callWatch{calls: calls, rc: rc, stop: -1}
}

func (w *callWatch) close() {
	if w.stop >= 0 {
		_ = unix.Close(w.stop)
		w.stop = -1
	}
}

// answer runs respond for one call under a context of its own, which the
// call's give-up cancels, and returns the envelope and the message the
// watcher read that is the reading loop's, if any.
func (w *callWatch) answer(ctx context.Context, respond func(context.Context) []byte) ([]byte, *pendingCall) {
	if w.rc == nil {
		return respond(ctx), nil
	}
	if w.stop < 0 {
		fd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
		if err != nil {
			return respond(ctx), nil // unwatched: the call ends with the guest at the latest
		}
		w.stop = fd
	}
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	after := giveUpWatchAfter
	if w.calls.Buffered() > 0 {
		after = 0 // the give-up came with the call
	}
	done := make(chan *pendingCall, 1)
	timer := time.AfterFunc(after, func() { done <- w.watch(cancel) })
	envelope := respond(callctx.WithRun(callCtx, ctx))
	if timer.Stop() {
		return envelope, nil // answered before anything was watched
	}
	// The watcher started, or is about to: the eventfd stays readable
	// until drained, so it returns either way.
	_, _ = unix.Write(w.stop, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	pending := <-done
	var drain [8]byte
	_, _ = unix.Read(w.stop, drain[:])
	return envelope, pending
}

// watch waits for the next message or for stop, whichever comes first;
// a give-up cancels the call, anything else is the reading loop's.
func (w *callWatch) watch(cancel context.CancelFunc) *pendingCall {
	if w.calls.Buffered() == 0 && !w.readable() {
		return nil
	}
	var c pendingCall
	c.frame, c.fault, c.err = readCall(w.calls)
	if c.err == nil && c.fault == faultGiveUp {
		cancel()
		return nil
	}
	return &c
}

// readable waits until the socket has bytes to read (or its peer closed)
// and says so, or until stop is written and says not: after its call was
// answered, what comes is the reading loop's.
func (w *callWatch) readable() bool {
	readable := false
	err := w.rc.Control(func(fd uintptr) {
		p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}, {Fd: int32(w.stop), Events: unix.POLLIN}}
		for {
			n, err := unix.Poll(p, -1)
			if err == unix.EINTR {
				continue
			}
			readable = err == nil && n > 0 && p[1].Revents == 0 && p[0].Revents != 0
			return
		}
	})
	return err == nil && readable
}
