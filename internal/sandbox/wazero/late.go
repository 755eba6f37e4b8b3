package wazero

import (
	"io/fs"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/sys"
)

// lateFS is a mount whose file system is the job's, known only once the
// job is (a guest started ahead of its job: startGuest). Until bind, every
// call waits for it, so a guest that reaches for its job's files (the
// runner opening its argv file) waits there, at the point where a native
// pooled runner waits on its job pipe. The one exception is wazero's own
// open of the mount's directory, which wasi-libc's start makes for every
// preopen before main (fd_fdstat_get): it gets a lateDir. The guest runs
// on one goroutine; bind happens on another, and the channel orders them.
type lateFS struct {
	bound   chan struct{}
	fs      experimentalsys.FS // set before bound closes
	waiting func()             // called when a call first waits (nil: none)
}

func newLateFS(waiting func()) *lateFS {
	return &lateFS{bound: make(chan struct{}), waiting: waiting}
}

// bind gives the mount its file system; once only.
func (l *lateFS) bind(fsys experimentalsys.FS) {
	l.fs = fsys
	close(l.bound)
}

func (l *lateFS) isBound() bool {
	select {
	case <-l.bound:
		return true
	default:
		return false
	}
}

func (l *lateFS) wait() experimentalsys.FS {
	if !l.isBound() && l.waiting != nil {
		l.waiting()
	}
	<-l.bound
	return l.fs
}

func (l *lateFS) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if path == "." && flag == experimentalsys.O_RDONLY && perm == 0 && !l.isBound() {
		return &lateDir{l: l}, 0
	}
	return l.wait().OpenFile(path, flag, perm)
}

func (l *lateFS) Lstat(path string) (sys.Stat_t, experimentalsys.Errno) {
	return l.wait().Lstat(path)
}

func (l *lateFS) Stat(path string) (sys.Stat_t, experimentalsys.Errno) {
	return l.wait().Stat(path)
}

func (l *lateFS) Mkdir(path string, perm fs.FileMode) experimentalsys.Errno {
	return l.wait().Mkdir(path, perm)
}

func (l *lateFS) Chmod(path string, perm fs.FileMode) experimentalsys.Errno {
	return l.wait().Chmod(path, perm)
}

func (l *lateFS) Rename(from, to string) experimentalsys.Errno {
	return l.wait().Rename(from, to)
}

func (l *lateFS) Rmdir(path string) experimentalsys.Errno {
	return l.wait().Rmdir(path)
}

func (l *lateFS) Unlink(path string) experimentalsys.Errno {
	return l.wait().Unlink(path)
}

func (l *lateFS) Link(oldPath, newPath string) experimentalsys.Errno {
	return l.wait().Link(oldPath, newPath)
}

func (l *lateFS) Symlink(oldPath, linkName string) experimentalsys.Errno {
	return l.wait().Symlink(oldPath, linkName)
}

func (l *lateFS) Readlink(path string) (string, experimentalsys.Errno) {
	return l.wait().Readlink(path)
}

func (l *lateFS) Utimens(path string, atim, mtim int64) experimentalsys.Errno {
	return l.wait().Utimens(path, atim, mtim)
}

func (l *lateFS) Lutimens(path string, atim, mtim int64) experimentalsys.Errno {
	return lutimens(l.wait(), path, atim, mtim)
}

// lateDir is a lateFS's own directory as wazero opened it for the
// preopen: a directory, which is all fd_fdstat_get asks of it before the
// job; everything else opens the bound file system's directory and asks
// it (waiting for the job first).
type lateDir struct {
	// Seek: ENOSYS (a guest seeks in directories it opened itself, never
	// in a mount's own descriptor).
	experimentalsys.UnimplementedFile
	l     *lateFS
	f     experimentalsys.File // once opened
	errno experimentalsys.Errno
}

// file is the bound mount's directory, opened on first use.
func (d *lateDir) file() (experimentalsys.File, experimentalsys.Errno) {
	if d.f == nil && d.errno == 0 {
		d.f, d.errno = d.l.wait().OpenFile(".", experimentalsys.O_RDONLY, 0)
	}
	return d.f, d.errno
}

func (d *lateDir) Dev() (uint64, experimentalsys.Errno) {
	f, errno := d.file()
	if errno != 0 {
		return 0, errno
	}
	return f.Dev()
}

func (d *lateDir) Ino() (sys.Inode, experimentalsys.Errno) {
	f, errno := d.file()
	if errno != 0 {
		return 0, errno
	}
	return f.Ino()
}

func (d *lateDir) IsDir() (bool, experimentalsys.Errno) { return true, 0 }

func (d *lateDir) IsAppend() bool { return false }

func (d *lateDir) SetAppend(bool) experimentalsys.Errno { return experimentalsys.EISDIR }

// Stat answers for a directory until the job is bound, then for the
// bound one.
func (d *lateDir) Stat() (sys.Stat_t, experimentalsys.Errno) {
	if d.f == nil && !d.l.isBound() {
		return sys.Stat_t{Mode: fs.ModeDir | 0o755, Nlink: 1}, 0
	}
	f, errno := d.file()
	if errno != 0 {
		return sys.Stat_t{}, errno
	}
	return f.Stat()
}

func (d *lateDir) Read([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EISDIR }

func (d *lateDir) Pread([]byte, int64) (int, experimentalsys.Errno) { return 0, experimentalsys.EISDIR }

func (d *lateDir) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	f, errno := d.file()
	if errno != 0 {
		return nil, errno
	}
	return f.Readdir(n)
}

func (d *lateDir) Write([]byte) (int, experimentalsys.Errno) { return 0, experimentalsys.EISDIR }

func (d *lateDir) Pwrite([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.EISDIR
}

func (d *lateDir) Truncate(int64) experimentalsys.Errno { return experimentalsys.EISDIR }

func (d *lateDir) Sync() experimentalsys.Errno {
	f, errno := d.file()
	if errno != 0 {
		return errno
	}
	return f.Sync()
}

func (d *lateDir) Datasync() experimentalsys.Errno {
	f, errno := d.file()
	if errno != 0 {
		return errno
	}
	return f.Datasync()
}

func (d *lateDir) Utimens(atim, mtim int64) experimentalsys.Errno {
	f, errno := d.file()
	if errno != 0 {
		return errno
	}
	return f.Utimens(atim, mtim)
}

// Close never waits: a guest that never got a job is closed too.
func (d *lateDir) Close() experimentalsys.Errno {
	if d.f == nil {
		return 0
	}
	return d.f.Close()
}
