package wazero

import (
	"context"
	"errors"
	"testing"
	"testing/fstest"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"

	"github.com/apysup/apysup/internal/sandbox"
)

// A start that never reaches its job still ends, as a timeout.
func TestRunClockBoundsTheStart(t *testing.T) {
	c := newRunClock(context.Background(), 10*time.Millisecond)
	defer c.stop()
	<-c.ctx.Done()
	if cause := context.Cause(c.ctx); !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("cause %v, want the deadline", cause)
	}
}

// Once started, the clock still ends the run; a run that ended first is
// not a timeout.
func TestRunClockStartedAndStopped(t *testing.T) {
	c := newRunClock(context.Background(), 10*time.Millisecond)
	c.start()
	c.start() // once
	<-c.ctx.Done()
	if cause := context.Cause(c.ctx); !errors.Is(cause, context.DeadlineExceeded) {
		t.Fatalf("cause %v, want the deadline", cause)
	}
	c.stop()

	c = newRunClock(context.Background(), time.Hour)
	c.start()
	c.stop()
	if cause := context.Cause(c.ctx); !errors.Is(cause, context.Canceled) {
		t.Fatalf("cause %v, want canceled", cause)
	}
}

// The job directory as the guest reaches it: opening or stat'ing the argv
// file starts the clock, the other files do not.
func TestOpenWatchSeesTheArgvFile(t *testing.T) {
	for _, tc := range []struct {
		name   string
		access func(experimentalsys.FS) experimentalsys.Errno
		want   int
	}{
		{"open script", func(fsys experimentalsys.FS) experimentalsys.Errno {
			_, errno := fsys.OpenFile("main.py", experimentalsys.O_RDONLY, 0)
			return errno
		}, 0},
		{"list", func(fsys experimentalsys.FS) experimentalsys.Errno {
			_, errno := fsys.OpenFile(".", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0)
			return errno
		}, 0},
		{"open argv", func(fsys experimentalsys.FS) experimentalsys.Errno {
			_, errno := fsys.OpenFile("/"+sandbox.ArgvFile, experimentalsys.O_RDONLY, 0)
			return errno
		}, 1},
		{"stat argv", func(fsys experimentalsys.FS) experimentalsys.Errno {
			_, errno := fsys.Stat("./" + sandbox.ArgvFile)
			return errno
		}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opened := 0
			job := fstest.MapFS{
				"main.py":        &fstest.MapFile{Data: []byte("pass\n"), Mode: 0o444},
				sandbox.ArgvFile: &fstest.MapFile{Data: []byte("main.py\x00"), Mode: 0o444},
			}
			fsys := &sysfs.AdaptFS{FS: openWatch{FS: job, name: sandbox.ArgvFile, opened: func() { opened++ }}}
			if errno := tc.access(fsys); errno != 0 {
				t.Fatal(errno)
			}
			if opened != tc.want {
				t.Fatalf("opened %d times, want %d", opened, tc.want)
			}
		})
	}
}
