package wazero

import (
	"io"
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// quota applies the run's Limits.OpenFiles and Limits.FileSizeBytes to the
// host files the guest opens through its writable mounts, as RLIMIT_NOFILE
// and RLIMIT_FSIZE do natively: without it a guest could hold the
// supervisor's file descriptors or fill its disk. WASI has no EMFILE or
// EFBIG, so the guest sees EAGAIN and EIO where a native guest sees those
// (a documented parity difference). One per run, shared by its mounts.
type quota struct {
	mu        sync.Mutex
	open      int
	maxOpen   int
	maxFileSz int64
}

func (q *quota) acquire() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.open >= q.maxOpen {
		return false
	}
	q.open++
	return true
}

func (q *quota) release() {
	q.mu.Lock()
	q.open--
	q.mu.Unlock()
}

// quotaFile is a host file counted against the quota until closed, whose
// writes stop at the file size limit.
type quotaFile struct {
	experimentalsys.File
	q      *quota
	closed bool
}

func (f *quotaFile) Close() experimentalsys.Errno {
	if !f.closed {
		f.closed = true
		f.q.release()
	}
	return f.File.Close()
}

// room is how many bytes may be written at off.
func (f *quotaFile) room(off int64) int64 { return f.q.maxFileSz - off }

func (f *quotaFile) Write(buf []byte) (int, experimentalsys.Errno) {
	var off int64
	var errno experimentalsys.Errno
	if f.IsAppend() {
		st, e := f.File.Stat()
		off, errno = st.Size, e
	} else {
		off, errno = f.File.Seek(0, io.SeekCurrent)
	}
	if errno != 0 {
		return 0, errno
	}
	room := f.room(off)
	if room <= 0 && len(buf) > 0 {
		return 0, experimentalsys.EIO
	}
	if int64(len(buf)) > room {
		buf = buf[:room]
	}
	return f.File.Write(buf)
}

func (f *quotaFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	room := f.room(off)
	if room <= 0 && len(buf) > 0 {
		return 0, experimentalsys.EIO
	}
	if int64(len(buf)) > room {
		buf = buf[:room]
	}
	return f.File.Pwrite(buf, off)
}

func (f *quotaFile) Truncate(size int64) experimentalsys.Errno {
	if size > f.q.maxFileSz {
		return experimentalsys.EIO
	}
	return f.File.Truncate(size)
}
