package wazero

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"testing/fstest"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"
)

// procDir is where the native guest finds the kernel's proc file system.
const procDir = "/proc"

// procFiles are the files of /proc that tell the native guest about the
// whole machine, and that it reads exactly as the host has them (no
// namespace changes them): the CPUs, the memory, the load, the uptime,
// the kernel's version and its counters. Scripts read them to size work
// (MemTotal, the processor lines) and to report on the machine; under
// wazero there was no /proc at all. They are read from the host's /proc
// at each open, as natively each read is the kernel's answer then.
//
// Nothing else of /proc is there: the per-process files (self, the pids)
// describe a process the wazero guest is not, and /proc/mounts and the
// like would show the host's mounts, not the sandbox's.
var procFiles = []string{"cpuinfo", "loadavg", "meminfo", "stat", "uptime", "version"}

// procFS is /proc: procFiles, read from the host's proc file system at
// hostDir.
type procFS struct {
	hostDir string
}

func (p procFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if name == "." {
		listing := fstest.MapFS{}
		for _, n := range procFiles {
			listing[n] = &fstest.MapFile{Mode: 0o444}
		}
		return listing.Open(".")
	}
	if !slices.Contains(procFiles, name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	data, err := os.ReadFile(path.Join(p.hostDir, name))
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	return &procFile{Reader: bytes.NewReader(data), name: name}, nil
}

// procFile is one file of procFiles as read at its open. Its size is 0,
// as the proc file system says of its files (which are made as they are
// read): a reader reads to the end, and pread reads the snapshot (shutil's
// copies read by pread under WASI: a copy of /proc/cpuinfo was empty).
type procFile struct {
	*bytes.Reader
	name string
}

func (f *procFile) Stat() (fs.FileInfo, error) { return procInfo{name: f.name}, nil }
func (f *procFile) Close() error               { return nil }
func (f *procFile) unsized()                   {}

// Seek is from the start or the current offset only: the proc file
// system's files (seq_file) refuse SEEK_END with EINVAL. An offset past
// the end reads as the end, as there.
func (f *procFile) Seek(offset int64, whence int) (int64, error) {
	if whence == io.SeekEnd {
		return 0, fs.ErrInvalid
	}
	return f.Reader.Seek(offset, whence)
}

type procInfo struct{ name string }

func (i procInfo) Name() string       { return i.name }
func (i procInfo) Size() int64        { return 0 }
func (i procInfo) Mode() fs.FileMode  { return 0o444 }
func (i procInfo) ModTime() time.Time { return time.Now() }
func (i procInfo) IsDir() bool        { return false }
func (i procInfo) Sys() any           { return nil }

// procView is /proc as the native guest sees it: nobody's (root's, through
// the user namespace), read-only, its directory searchable.
func procView(_ string, st wsys.Stat_t) (fs.FileMode, owner, uint16) {
	if st.Mode.IsDir() {
		return 0o555, ownerNobody, 0
	}
	return 0o444, ownerNobody, 0
}

// procStatvfs is statvfs of /proc as the native guest's proc file system
// answers it: no blocks, no inodes, nosuid, nodev, noexec.
func procStatvfs() vfsStat {
	return vfsStat{bsize: 4096, frsize: 4096, flag: stNosuid | stNodev | stNoexec | stRelatime, namemax: nameMax}
}

// procMount is /proc with the native guest's refusals: its proc file
// system is not mounted read-only, but its files are nobody's and not
// writable, so where a read-only mount refuses with EROFS a write or a
// removal here is EACCES, a change of mode (the owner's alone) EPERM,
// and a new name (a create, mkdir, rename, link or symlink) ENOENT: the
// proc file system makes no names. The mount point itself stays EROFS to
// rmdir, as natively, where it lies on the read-only root.
type procMount struct{ experimentalsys.FS } // a readOnly

func newProcMount(hostDir string) experimentalsys.FS {
	return procMount{newReadOnly(&sysfs.AdaptFS{FS: procFS{hostDir: hostDir}})}
}

// notOwned turns a read-only mount's EROFS into the proc file system's
// refusal.
func notOwned(errno, instead experimentalsys.Errno) experimentalsys.Errno {
	if errno == experimentalsys.EROFS {
		return instead
	}
	return errno
}

func (p procMount) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	f, errno := p.FS.OpenFile(name, flag, perm)
	if errno == experimentalsys.EROFS {
		if _, serr := p.FS.Stat(name); serr == experimentalsys.ENOENT {
			return nil, experimentalsys.ENOENT
		}
		return nil, experimentalsys.EACCES
	}
	return f, errno
}

func (p procMount) Mkdir(name string, perm fs.FileMode) experimentalsys.Errno {
	return notOwned(p.FS.Mkdir(name, perm), experimentalsys.ENOENT)
}

func (p procMount) Chmod(name string, perm fs.FileMode) experimentalsys.Errno {
	return notOwned(p.FS.Chmod(name, perm), experimentalsys.EPERM)
}

func (p procMount) Rename(from, to string) experimentalsys.Errno {
	return notOwned(p.FS.Rename(from, to), experimentalsys.ENOENT)
}

func (p procMount) Unlink(name string) experimentalsys.Errno {
	return onRoot(name, notOwned(p.FS.Unlink(name), experimentalsys.EACCES))
}

// Rmdir of a name in /proc is EACCES (the directory is not the guest's
// to change), of /proc itself EROFS (on the read-only root).
func (p procMount) Rmdir(name string) experimentalsys.Errno {
	return onRoot(name, notOwned(p.FS.Rmdir(name), experimentalsys.EACCES))
}

func (p procMount) Link(from, to string) experimentalsys.Errno {
	return notOwned(p.FS.Link(from, to), experimentalsys.ENOENT)
}

func (p procMount) Symlink(from, to string) experimentalsys.Errno {
	return notOwned(p.FS.Symlink(from, to), experimentalsys.ENOENT) // EEXIST of a name there first
}

func (p procMount) Utimens(name string, atim, mtim int64) experimentalsys.Errno {
	return notOwned(p.FS.Utimens(name, atim, mtim), experimentalsys.EACCES)
}
