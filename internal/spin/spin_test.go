package spin

import (
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

func socketPair(t *testing.T) (a, b *os.File) {
	t.Helper()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	a, b = os.NewFile(uintptr(fds[0]), "a"), os.NewFile(uintptr(fds[1]), "b")
	t.Cleanup(func() { a.Close(); b.Close() })
	return a, b
}

func rawConn(t *testing.T, f *os.File) syscall.RawConn {
	t.Helper()
	rc, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// Readable says whether bytes came within the window, and reads none of
// them; a peer that closed is readable too (read then says EOF), a closed
// descriptor is not.
func TestReadable(t *testing.T) {
	a, b := socketPair(t)
	rc := rawConn(t, a)
	start := time.Now()
	if Readable(rc, 2*time.Millisecond, nil) {
		t.Fatal("readable with nothing written")
	}
	if waited := time.Since(start); waited < 2*time.Millisecond {
		t.Fatalf("gave up after %s of a 2ms window", waited)
	}
	yields := 0
	go func() {
		time.Sleep(time.Millisecond)
		_, _ = b.Write([]byte("x"))
	}()
	if !Readable(rc, 10*time.Second, func() { yields++ }) {
		t.Fatal("not readable after a write")
	}
	if yields == 0 {
		t.Error("the spin never yielded")
	}
	if !Readable(rc, 0, nil) {
		t.Fatal("the byte was consumed")
	}
	var buf [2]byte
	if n, err := a.Read(buf[:]); n != 1 || err != nil {
		t.Fatalf("read %d, %v", n, err)
	}
	b.Close()
	if !Readable(rc, 10*time.Second, nil) {
		t.Fatal("a closed peer is not readable")
	}
	a.Close()
	if Readable(rc, time.Millisecond, nil) {
		t.Fatal("a closed file is readable")
	}
}

// Adaptive polls for a peer's next request only while the requests come
// within the window of their answers.
func TestAdaptive(t *testing.T) {
	a, b := socketPair(t)
	rc := rawConn(t, a)
	s := Adaptive{Window: 50 * time.Millisecond}
	now := time.Now()
	s.Arrived(now) // the first request: nothing answered yet
	if s.On() {
		t.Fatal("polling before the first answer")
	}
	s.Answered(now)
	s.Arrived(now.Add(s.Window / 2))
	if !s.On() {
		t.Fatal("a request within the window left the polling off")
	}
	_, _ = b.Write([]byte("x"))
	s.Wait(rc, nil)
	if !s.On() {
		t.Fatal("a request found by polling turned it off")
	}
	var buf [1]byte
	_, _ = a.Read(buf[:])
	start := time.Now()
	s.Wait(rc, nil) // nothing comes
	if s.On() {
		t.Fatal("polling that found nothing left it on")
	}
	if waited := time.Since(start); waited < s.Window {
		t.Fatalf("gave up after %s of a %s window", waited, s.Window)
	}
	start = time.Now()
	s.Wait(rc, nil)
	if waited := time.Since(start); waited > s.Window/2 {
		t.Fatalf("polled %s while off", waited)
	}
	s.Answered(now)
	s.Arrived(now.Add(2 * s.Window))
	if s.On() {
		t.Fatal("a request long after its answer turned the polling on")
	}
}

// A shared budget bounds the windows polled: over it, Wait returns at once
// and turns the polling off.
func TestAdaptiveBudget(t *testing.T) {
	a, _ := socketPair(t)
	rc := rawConn(t, a)
	var budget atomic.Int64
	budget.Store(1)
	s := Adaptive{Window: 20 * time.Millisecond, Budget: &budget}
	now := time.Now()
	for i, want := range []time.Duration{s.Window, 0} {
		s.Answered(now)
		s.Arrived(now)
		start := time.Now()
		s.Wait(rc, nil)
		waited := time.Since(start)
		if (want > 0 && waited < want) || (want == 0 && waited > s.Window/2) {
			t.Fatalf("wait %d: %s, want %s", i, waited, want)
		}
		if s.On() {
			t.Fatalf("wait %d: polling on after a window with nothing", i)
		}
	}
	if budget.Load() != -1 {
		t.Fatalf("budget %d", budget.Load())
	}
}
