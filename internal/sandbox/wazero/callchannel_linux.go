package wazero

import (
	"bufio"
	"context"
	"os"
)

// callChannel is a child's end of its host calls: a frame up the
// socketpair, its answer down, in order. A call a timer interrupts is
// still answered by the parent, which serves calls one at a time; its
// answer is owed until read. If the guest waits on for it (faultResume),
// it is the call's; if the guest gives the call up (its signal handler
// raised), the parent is told (faultGiveUp), which cancels the call in the
// Broker unless its handler runs already, and its answer is read and
// dropped before the next call's, as natively the answer of a connection
// the bridge closed is lost. A handler that returns may have made calls of
// its own meanwhile: their answers come after the interrupted call's,
// which is kept for its resume.
type callChannel struct {
	f *os.File
	r *bufio.Reader
	// unread: the calls whose answers the parent still sends, in the
	// order it sends them; waiting: the calls the guest has made and
	// neither had answered nor given up, the latest last.
	unread, waiting []*owedCall
	reading         chan callAnswer // the read in progress when a timer interrupted it
}

// owedCall is one call's answer, once read (answered); a given-up call's
// is dropped.
type owedCall struct {
	answered, givenUp bool
	envelope          []byte
}

type callAnswer struct {
	envelope []byte
	err      error
}

func newCallChannel(f *os.File) *callChannel {
	return &callChannel{f: f, r: bufio.NewReaderSize(f, callBufferBytes)}
}

// call sends frame (unless fault is faultResume) and returns the answer
// to the guest's latest call, nil when there is none to deliver, or
// interrupted when a timer of the guest's came due first.
func (c *callChannel) call(ctx context.Context, frame []byte, fault string) (envelope []byte, interrupted bool) {
	switch fault {
	case faultGiveUp:
		if n := len(c.waiting); n > 0 {
			e := c.waiting[n-1]
			c.waiting = c.waiting[:n-1]
			e.givenUp, e.envelope = true, nil
			if !e.answered {
				_ = writeCall(c.f, nil, faultGiveUp) // a lost give-up leaves the call to end with the guest
			}
		}
		return nil, false
	case faultResume:
		if len(c.waiting) == 0 {
			return nil, false // a resume with nothing owed
		}
	default:
		if writeCall(c.f, frame, fault) != nil {
			return nil, false
		}
		e := &owedCall{}
		c.unread = append(c.unread, e)
		c.waiting = append(c.waiting, e)
	}
	e := c.waiting[len(c.waiting)-1]
	for !e.answered {
		a, ok := c.next(ctx)
		if !ok {
			return nil, true
		}
		if a.err != nil {
			c.unread, c.waiting = nil, nil // the channel is gone: nothing more comes
			return nil, false
		}
		head := c.unread[0]
		c.unread = c.unread[1:]
		head.answered = true
		if !head.givenUp {
			head.envelope = a.envelope
		}
	}
	c.waiting = c.waiting[:len(c.waiting)-1]
	return e.envelope, false
}

// next reads the next answer: on the guest's thread when it comes within
// answerSpin (a call's common case, without a hand-off), else on another
// goroutine while the guest's thread waits for it or for a timer (ok
// false: the read goes on, and the next call to next takes it over).
func (c *callChannel) next(ctx context.Context) (a callAnswer, ok bool) {
	if c.reading == nil {
		if c.r.Buffered() > 0 || spinReadable(c.f, answerSpin, nil) {
			a.envelope, a.err = readAnswer(c.r)
			return a, true
		}
		c.reading = make(chan callAnswer, 1)
		go func(done chan<- callAnswer) {
			var a callAnswer
			a.envelope, a.err = readAnswer(c.r)
			done <- a
		}(c.reading)
	}
	var fired [itimerKinds]<-chan struct{}
	if ts, _ := ctx.Value(timerKey{}).(*guestTimers); ts != nil {
		for kind, t := range ts {
			fired[kind] = t.fired
		}
	}
	select {
	case a = <-c.reading:
		c.reading = nil
		return a, true
	case <-fired[itimerReal]:
	case <-fired[itimerVirtual]:
	case <-fired[itimerProf]:
	}
	return callAnswer{}, false
}
