package native

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

// endWatch waits for the runner's report of its end: the file
// sandbox.EndedFile in the out directory, holding the exit status the
// runner is about to exit with, written once its outcome is and its
// standard descriptors are closed (python/guest/apysup_runner.py). Wait
// takes the report for the exit it announces: the run's result then does
// not wait for the kernel to tear the interpreter's process down, then its
// pid namespace (2-3 ms a run here, STARTUP.md). The report is the guest's
// word, as pid 1's exit status is: it can make a run ok or error, never
// anything the host decides, and a script that writes it early ends its
// own run, as os._exit would. Without a report (a script that exits by
// itself, a crash, a signal, a guest that spoils the out directory) Wait
// learns the end from the kernel, as before.
type endWatch struct {
	f    *os.File      // an inotify instance watching the out directory
	code chan int      // the reported exit status, at most once
	done chan struct{} // closed when the watch has ended (a report read, or not)
}

// watchEnd starts watching dir. It fails only when the kernel refuses an
// inotify instance (a host at fs.inotify.max_user_instances): the caller
// then runs without it.
func watchEnd(dir string) (*endWatch, error) {
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC | unix.IN_NONBLOCK)
	if err != nil {
		return nil, err
	}
	if _, err := unix.InotifyAddWatch(fd, dir, unix.IN_CLOSE_WRITE|unix.IN_ONLYDIR|unix.IN_DONT_FOLLOW); err != nil {
		unix.Close(fd)
		return nil, err
	}
	w := &endWatch{f: os.NewFile(uintptr(fd), "inotify "+dir), code: make(chan int, 1), done: make(chan struct{})}
	go w.read(filepath.Join(dir, sandbox.EndedFile))
	return w, nil
}

// read waits for the first closed write of the report's file and reads it.
// It returns at the first one, whatever it holds, or when the watch is
// closed.
func (w *endWatch) read(path string) {
	defer close(w.done)
	buf := make([]byte, 4096) // events a batch: the guest may make many
	for {
		n, err := w.f.Read(buf)
		if err != nil {
			return
		}
		if !namesEnded(buf[:n]) {
			continue
		}
		data, _ := sandbox.ReadGuestFile(path, maxEnded)
		if code, ok := parseEnded(data); ok {
			w.code <- code
		}
		return
	}
}

// close stops the watch; safe on nil.
func (w *endWatch) close() {
	if w != nil {
		w.f.Close()
	}
}

// namesEnded reports whether the inotify events in b (whole events, as
// read(2) returns them) include a closed write of sandbox.EndedFile. The
// names are the guest's.
func namesEnded(b []byte) bool {
	const header = unix.SizeofInotifyEvent // wd, mask, cookie, len
	for len(b) >= header {
		mask := binary.NativeEndian.Uint32(b[4:8])
		n := binary.NativeEndian.Uint32(b[12:16])
		if uint64(n) > uint64(len(b)-header) {
			return false
		}
		name := bytes.TrimRight(b[header:header+int(n)], "\x00")
		if mask&unix.IN_CLOSE_WRITE != 0 && string(name) == sandbox.EndedFile {
			return true
		}
		b = b[header+int(n):]
	}
	return false
}

// maxEnded bounds what is read of the report: "255".
const maxEnded = 3

// parseEnded is the report's exit status: decimal digits, no sign, no
// leading zero, no space, 0 to 255.
func parseEnded(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 3 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	code, err := strconv.Atoi(string(b))
	if err != nil || code > 255 {
		return 0, false
	}
	return code, true
}
