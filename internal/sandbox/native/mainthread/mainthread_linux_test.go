package mainthread

import (
	"os"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// movedInMain is what TestMain's probe saw: whether the main goroutine ever
// ran on another thread than the main one.
var movedInMain bool

// TestMain probes from the main goroutine, where the package's init lock
// applies (a test function runs on a goroutine of its own). It sleeps in a
// system call while other goroutines keep every P busy: the runtime hands
// the main thread's P to another thread meanwhile, and an unlocked main
// goroutine then resumes on whichever thread has a P (native's
// TestImportDoesNotHijack shows a plain program moving so).
func TestMain(m *testing.M) {
	stop := make(chan struct{})
	for range runtime.GOMAXPROCS(0) + 1 {
		go func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
			}
		}()
	}
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline) && !movedInMain; {
		ts := syscall.NsecToTimespec(int64(2 * time.Millisecond))
		syscall.Nanosleep(&ts, nil)
		movedInMain = syscall.Gettid() != os.Getpid()
	}
	close(stop)
	os.Exit(m.Run())
}

func TestMainGoroutineKeepsTheMainThread(t *testing.T) {
	if movedInMain {
		t.Fatal("the main goroutine ran on another thread than the main one")
	}
}
