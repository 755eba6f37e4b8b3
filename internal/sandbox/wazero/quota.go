package wazero

import (
	"io"
	"io/fs"
	"sync"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// openFiles applies the run's Limits.OpenFiles to every file and directory
// the guest holds open, on every mount (host directories, the in-memory
// stdlib, guest and job files alike), as RLIMIT_NOFILE does natively:
// without it a guest could hold the supervisor's descriptors (or its
// memory) until every other run failed with EMFILE. wazero has no EMFILE
// to answer, so OpenFile answers EAGAIN, which the WASI build's open turns
// into EMFILE (python/wasi/_apysup_errno.c), as natively. One per run,
// shared by its mounts; all it counts is released when the module closes.
//
// The runner writes outcome.json with the same budget, after the script:
// a script that still holds every descriptor when it ends (a reference
// cycle keeps its files alive past its module) leaves no outcome, and the
// runner fails with exit status 1. That is what happens natively too,
// where the runner's main() writes the outcome in the script's own process
// under the same RLIMIT_NOFILE (pid 1 only waits, and writes an outcome
// only for a script killed by a signal). No slot is reserved for the
// outcome: it would make the two backends disagree, and the outcome is the
// guest's own untrusted report, which a guest can spoil in many ways;
// status, receipts and the workspace come from the host.
type openFiles struct {
	mu   sync.Mutex
	open int
	max  int
}

// acquire takes a slot; force takes it even past the limit.
func (q *openFiles) acquire(force bool) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.open >= q.max && !force {
		return false
	}
	q.open++
	return true
}

func (q *openFiles) release() {
	q.mu.Lock()
	q.open--
	q.mu.Unlock()
}

// setMax sets the limit that opens are checked against from now on.
func (q *openFiles) setMax(n int) {
	q.mu.Lock()
	q.max = n
	q.mu.Unlock()
}

// held is how many files the guest holds open.
func (q *openFiles) held() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.open
}

// countedFS counts the files opened through one mount against the run's
// openFiles.
//
// wazero opens each mount's directory once itself, lazily, for the
// guest's descriptor table (OpenFile(".", O_RDONLY, 0); the guest's
// path_open always passes 0o600), as soon as wasi-libc lists the
// preopens before main. That open is counted but never refused: wazero
// treats any error there but ENOENT as a bug and panics. It is at most one
// per mount, nine in all (with the guest's "/", /dev and /tmp), which the
// guest's descriptors below the limit have matched the native guest's
// since; a mount added later (/proc, /etc) has its preopen left out of
// the count (freePreopen), so that they still do.
type countedFS struct {
	experimentalsys.FS
	q           *openFiles
	rootOpened  bool // the mount's own directory was opened for wazero
	freePreopen bool // that open takes no slot
}

// Lutimens passes utime without following a link on (lutimens): it opens
// nothing of the guest's.
func (c *countedFS) Lutimens(path string, atim, mtim int64) experimentalsys.Errno {
	return lutimens(c.FS, path, atim, mtim)
}

func (c *countedFS) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	preopen := !c.rootOpened && path == "." && flag == experimentalsys.O_RDONLY && perm == 0
	q := c.q
	if preopen && c.freePreopen {
		q = nil
	} else if !q.acquire(preopen) {
		return nil, experimentalsys.EAGAIN
	}
	f, errno := c.FS.OpenFile(path, flag, perm)
	if errno != 0 {
		if q != nil {
			q.release()
		}
		return nil, errno
	}
	c.rootOpened = c.rootOpened || preopen
	return &countedFile{File: f, q: q}, 0
}

// countedFile holds its slot (in q, unless nil) until closed.
//
// It is also every guest file's O_NONBLOCK: a file of a mount is a regular
// file or a directory, on which Linux accepts O_NONBLOCK and ignores it
// (reads never block), so the flag is recorded and reported back
// (os.set_blocking, os.get_blocking) and changes nothing, as natively.
// Without it wazero answers fd_fdstat_set_flags with ENOSYS for any file
// that is not a PollableFile, which no wrapped file is.
type countedFile struct {
	experimentalsys.File
	q        *openFiles
	closed   bool
	nonblock bool
}

var _ experimentalsys.PollableFile = (*countedFile)(nil)

// SetNonblock implements experimentalsys.PollableFile.
func (f *countedFile) SetNonblock(enable bool) experimentalsys.Errno {
	f.nonblock = enable
	return 0
}

// SetAppend changes nothing when the flag stays as it is: wazero sets it
// along with O_NONBLOCK (fcntl F_SETFL sets both), and a read-only mount's
// files cannot change it at all (ENOSYS), where natively F_SETFL succeeds.
func (f *countedFile) SetAppend(enable bool) experimentalsys.Errno {
	if enable == f.File.IsAppend() {
		return 0
	}
	return f.File.SetAppend(enable)
}

// IsNonblock implements experimentalsys.PollableFile.
func (f *countedFile) IsNonblock() bool { return f.nonblock }

// Poll implements experimentalsys.PollableFile: a regular file or a
// directory is always ready, as poll(2) answers for one.
func (f *countedFile) Poll(experimentalsys.Pflag, int32) (bool, experimentalsys.Errno) {
	return true, 0
}

func (f *countedFile) Close() experimentalsys.Errno {
	if !f.closed {
		f.closed = true
		if f.q != nil { // nil: a free preopen (countedFS)
			f.q.release()
		}
	}
	return f.File.Close()
}

// sizedFile stops writes at Limits.FileSizeBytes, as RLIMIT_FSIZE does
// natively. wazero has no EFBIG: the refusal is ERANGE, which the WASI
// build's writes and truncates turn into EFBIG (python/wasi/_apysup_errno.c).
type sizedFile struct {
	experimentalsys.File
	max *atomic.Int64 // read at each write: the guest's RLIMIT_FSIZE may move
}

// room is how many bytes may be written at off.
func (f *sizedFile) room(off int64) int64 { return f.max.Load() - off }

func (f *sizedFile) Write(buf []byte) (int, experimentalsys.Errno) {
	off, errno := writeOffset(f.File)
	if errno != 0 {
		return 0, errno
	}
	if buf, errno = clip(buf, f.room(off), experimentalsys.ERANGE); errno != 0 {
		return 0, errno
	}
	return f.File.Write(buf)
}

// Pwrite writes at off, or, on a file opened with O_APPEND, at its end
// as Linux's pwrite(2) does (wazero's host file refused it: Go's WriteAt
// refuses a file opened for appending). The descriptor's offset is left
// where it was, as pwrite leaves it.
func (f *sizedFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.IsAppend() {
		at, errno := f.File.Seek(0, io.SeekCurrent)
		if errno != 0 {
			return 0, errno
		}
		n, errno := f.Write(buf)
		if _, e := f.File.Seek(at, io.SeekStart); errno == 0 {
			errno = e
		}
		return n, errno
	}
	buf, errno := clip(buf, f.room(off), experimentalsys.ERANGE)
	if errno != 0 {
		return 0, errno
	}
	return f.File.Pwrite(buf, off)
}

func (f *sizedFile) Truncate(size int64) experimentalsys.Errno {
	if size > f.max.Load() {
		return experimentalsys.ERANGE
	}
	return f.File.Truncate(size)
}

// writeOffset is where f's next Write lands.
func writeOffset(f experimentalsys.File) (int64, experimentalsys.Errno) {
	if f.IsAppend() {
		st, errno := f.Stat()
		return st.Size, errno
	}
	return f.Seek(0, io.SeekCurrent)
}

// clip cuts buf to room bytes, a short write as at a full disk; no room at
// all is full.
func clip(buf []byte, room int64, full experimentalsys.Errno) ([]byte, experimentalsys.Errno) {
	if room <= 0 && len(buf) > 0 {
		return nil, full
	}
	if int64(len(buf)) > room {
		buf = buf[:room]
	}
	return buf, 0
}
