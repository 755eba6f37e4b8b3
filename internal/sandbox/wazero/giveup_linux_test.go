package wazero

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"testing"
	"time"
)

// giveUpPair is a call socket: the child's end, and the parent's read
// through its buffer and watched as runChild watches it.
func giveUpPair(t *testing.T) (child *os.File, calls *bufio.Reader, w *callWatch) {
	t.Helper()
	parent, child := callSocket(t)
	rc, err := parent.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	calls = bufio.NewReaderSize(parent, callBufferBytes)
	w = newCallWatch(calls, rc)
	t.Cleanup(w.close)
	return child, calls, w
}

// A call answered at once is never watched; one that waits is canceled by
// its give-up, however late, and the message after the give-up stays the
// reading loop's.
func TestGiveUpCancelsTheCall(t *testing.T) {
	child, calls, w := giveUpPair(t)
	frame := []byte(`{"call_id":"capability-2"}`)

	envelope, pending := w.answer(context.Background(), func(context.Context) []byte { return []byte("at once") })
	if string(envelope) != "at once" || pending != nil {
		t.Fatalf("%q %+v", envelope, pending)
	}

	for _, late := range []time.Duration{0, 5 * giveUpWatchAfter} {
		go func() {
			time.Sleep(late)
			_ = writeCall(child, nil, faultGiveUp)
			_ = writeCall(child, frame, "") // the guest's next call, at once
		}()
		var canceled error
		envelope, pending = w.answer(context.Background(), func(ctx context.Context) []byte {
			select {
			case <-ctx.Done():
				canceled = ctx.Err()
			case <-time.After(time.Minute):
			}
			return nil
		})
		if canceled != context.Canceled || envelope != nil || pending != nil {
			t.Fatalf("given up after %s: %v %q %+v", late, canceled, envelope, pending)
		}
		if got, fault, err := readCall(calls); err != nil || fault != "" || !bytes.Equal(got, frame) {
			t.Fatalf("the next call: %q %q %v", got, fault, err)
		}
	}
}

// A call whose give-up came with it (both in the buffer) is canceled too.
func TestGiveUpBufferedWithTheCall(t *testing.T) {
	child, calls, w := giveUpPair(t)
	_ = writeCall(child, []byte(`{"call_id":"capability-1"}`), "")
	_ = writeCall(child, nil, faultGiveUp)
	time.Sleep(10 * time.Millisecond) // both arrive, and one read takes them
	if _, _, err := readCall(calls); err != nil || calls.Buffered() == 0 {
		t.Fatalf("%v, %d buffered", err, calls.Buffered())
	}
	var canceled error
	w.answer(context.Background(), func(ctx context.Context) []byte {
		select {
		case <-ctx.Done():
			canceled = ctx.Err()
		case <-time.After(time.Minute):
		}
		return nil
	})
	if canceled != context.Canceled {
		t.Fatalf("not canceled: %v", canceled)
	}
}

// What the watcher reads that is no give-up (a call a child sent without
// one, the socket's end) is the reading loop's; a call answered while
// nothing came leaves the socket as it was.
func TestGiveUpWatcherLeavesTheRest(t *testing.T) {
	child, calls, w := giveUpPair(t)
	frame := []byte(`{"call_id":"capability-3"}`)
	slow := func(ctx context.Context) []byte {
		time.Sleep(20 * giveUpWatchAfter)
		if ctx.Err() != nil {
			t.Errorf("canceled without a give-up: %v", ctx.Err())
		}
		return []byte("answered")
	}

	envelope, pending := w.answer(context.Background(), slow)
	if string(envelope) != "answered" || pending != nil {
		t.Fatalf("nothing sent: %q %+v", envelope, pending)
	}
	_ = writeCall(child, frame, "")
	if got, _, err := readCall(calls); err != nil || !bytes.Equal(got, frame) {
		t.Fatalf("after an unwatched wait: %q %v", got, err)
	}

	go func() {
		time.Sleep(5 * giveUpWatchAfter)
		_ = writeCall(child, frame, "")
	}()
	envelope, pending = w.answer(context.Background(), slow)
	if string(envelope) != "answered" || pending == nil || pending.err != nil || !bytes.Equal(pending.frame, frame) {
		t.Fatalf("a call without a give-up: %q %+v", envelope, pending)
	}

	go func() {
		time.Sleep(5 * giveUpWatchAfter)
		_ = child.Close()
	}()
	_, pending = w.answer(context.Background(), slow)
	if pending == nil || pending.err == nil {
		t.Fatalf("the socket's end: %+v", pending)
	}
}
