package wazero

import (
	"bufio"
	"context"
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// fakeParent answers each call on its end of a socketpair with the frame
// itself, after delay.
// A give-up is seen as itself and not answered, as the parent answers
// only calls.
func fakeParent(t *testing.T, delay time.Duration) (child *os.File, calls <-chan string) {
	t.Helper()
	parent, child := callSocket(t)
	seen := make(chan string, 16)
	go func() {
		r := bufio.NewReader(parent)
		for {
			frame, fault, err := readCall(r)
			if err != nil {
				return
			}
			if fault == faultGiveUp {
				seen <- faultGiveUp
				continue
			}
			seen <- string(frame)
			time.Sleep(delay)
			if writeAnswer(parent, frame) != nil {
				return
			}
		}
	}()
	return child, seen
}

// callSocket is a call socket's two ends, the parent's and the child's,
// closed when the test ends.
func callSocket(t *testing.T) (parent, child *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	parent, child = os.NewFile(uintptr(fds[0]), "parent"), os.NewFile(uintptr(fds[1]), "child")
	t.Cleanup(func() { parent.Close(); child.Close() })
	return parent, child
}

// The child's end of its calls: a call's own answer; a timer that comes
// due during a wait interrupts it with the answer still owed, which a
// resume takes, and which a new call drops before its own.
func TestCallChannel(t *testing.T) {
	timers := newGuestTimers(&linearMemory{mapping: make([]byte, 4096)}, &guestCPU{})
	ctx := context.WithValue(context.Background(), timerKey{}, timers)
	f, seen := fakeParent(t, 50*time.Millisecond)
	c := newCallChannel(f)

	if env, interrupted := c.call(ctx, []byte("one"), ""); string(env) != "one" || interrupted {
		t.Fatalf("call: %q, interrupted %v", env, interrupted)
	}
	timers[itimerReal].fired <- struct{}{}
	if env, interrupted := c.call(ctx, []byte("two"), ""); env != nil || !interrupted {
		t.Fatalf("interrupted call: %q, interrupted %v", env, interrupted)
	}
	if env, interrupted := c.call(ctx, nil, faultResume); string(env) != "two" || interrupted {
		t.Fatalf("resumed: %q, interrupted %v", env, interrupted)
	}
	timers[itimerProf].fired <- struct{}{}
	if _, interrupted := c.call(ctx, []byte("three"), ""); !interrupted {
		t.Fatal("not interrupted")
	}
	// Given up: the parent is told, and the next call's answer is its own.
	if env, interrupted := c.call(ctx, nil, faultGiveUp); env != nil || interrupted || len(c.unread) != 1 {
		t.Fatalf("give-up: %q, interrupted %v, owed %d", env, interrupted, len(c.unread))
	}
	if env, interrupted := c.call(ctx, []byte("four"), ""); string(env) != "four" || interrupted {
		t.Fatalf("after a call given up: %q, interrupted %v", env, interrupted)
	}
	if env, interrupted := c.call(ctx, nil, faultResume); env != nil || interrupted {
		t.Fatalf("a resume with nothing owed: %q, interrupted %v", env, interrupted)
	}
	// A give-up with nothing owed says nothing: the parent sees no give-up
	// after "four".
	if env, interrupted := c.call(ctx, nil, faultGiveUp); env != nil || interrupted {
		t.Fatalf("a give-up with nothing owed: %q, interrupted %v", env, interrupted)
	}
	for _, want := range []string{"one", "two", "three", faultGiveUp, "four"} {
		if got := <-seen; got != want {
			t.Fatalf("the parent got %q, want %q", got, want)
		}
	}
	select {
	case got := <-seen:
		t.Fatalf("the parent got %q after the last call", got)
	case <-time.After(100 * time.Millisecond):
	}
	// The channel gone: no answer, and nothing owed after.
	f.Close()
	if env, interrupted := c.call(ctx, []byte("five"), ""); env != nil || interrupted || len(c.unread) != 0 {
		t.Fatalf("closed: %q, interrupted %v, owed %d", env, interrupted, len(c.unread))
	}
}

// A signal handler's call, made while an interrupted call's answer is
// owed, gets its own answer, and the interrupted call's resume then gets
// the one that came first, its own (it was dropped as given up, and the
// script saw dispatch_outcome_unknown for a call that ended ok).
func TestCallChannelNestedCall(t *testing.T) {
	timers := newGuestTimers(&linearMemory{mapping: make([]byte, 4096)}, &guestCPU{})
	ctx := context.WithValue(context.Background(), timerKey{}, timers)
	f, seen := fakeParent(t, 50*time.Millisecond)
	c := newCallChannel(f)

	timers[itimerReal].fired <- struct{}{}
	if env, interrupted := c.call(ctx, []byte("outer"), ""); env != nil || !interrupted {
		t.Fatalf("interrupted call: %q, interrupted %v", env, interrupted)
	}
	if env, interrupted := c.call(ctx, []byte("inner"), ""); string(env) != "inner" || interrupted {
		t.Fatalf("the handler's call: %q, interrupted %v", env, interrupted)
	}
	if env, interrupted := c.call(ctx, nil, faultResume); string(env) != "outer" || interrupted {
		t.Fatalf("resumed: %q, interrupted %v", env, interrupted)
	}
	// Nested, then the outer call given up after the handler's call:
	// its answer is read already, so the parent is told nothing.
	timers[itimerReal].fired <- struct{}{}
	if _, interrupted := c.call(ctx, []byte("outer2"), ""); !interrupted {
		t.Fatal("not interrupted")
	}
	if env, _ := c.call(ctx, []byte("inner2"), ""); string(env) != "inner2" {
		t.Fatalf("the handler's call: %q", env)
	}
	if env, interrupted := c.call(ctx, nil, faultGiveUp); env != nil || interrupted || len(c.waiting) != 0 || len(c.unread) != 0 {
		t.Fatalf("give-up: %q %v, %d waiting, %d unread", env, interrupted, len(c.waiting), len(c.unread))
	}
	if env, _ := c.call(ctx, []byte("next"), ""); string(env) != "next" {
		t.Fatalf("the next call: %q", env)
	}
	for _, want := range []string{"outer", "inner", "outer2", "inner2", "next"} {
		if got := <-seen; got != want {
			t.Fatalf("the parent got %q, want %q", got, want)
		}
	}
}
