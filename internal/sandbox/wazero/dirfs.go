package wazero

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"
)

// confinedDir is a host directory mounted writable into the guest that the
// guest cannot leave through symlinks. wazero resolves guest paths
// lexically (".." cannot climb out) but the host kernel follows symlinks,
// so a relative symlink such as "../../etc" would reach the host's files.
// The guest therefore cannot create symlinks, and Backend.Run refuses a
// workspace that holds any (or a FIFO or device): wazero itself reopens
// files by host path on a directory rewind or an append toggle, around
// these checks. No operation goes through a symlink either, as a second
// wall: a symlink can be listed, read with readlink and removed, nothing
// else.
// Natively the same tree is bind-mounted and symlinks resolve inside the
// sandbox; this is a documented parity difference.
//
// Path checks and the operation are not atomic; that is safe because only
// the guest, a single thread blocked in this call, writes into the tree.
//
// Writes stop at maxFileSize (Limits.FileSizeBytes, or the guest's lower
// RLIMIT_FSIZE; see sizedFile).
type confinedDir struct {
	experimentalsys.FS
	root        string
	maxFileSize *atomic.Int64
}

func newConfinedDir(dir string, maxFileSize int64) *confinedDir {
	limit := new(atomic.Int64)
	limit.Store(maxFileSize)
	return newConfinedDirSized(dir, limit)
}

// newConfinedDirSized is newConfinedDir with a limit a guest's mounts
// share and its RLIMIT_FSIZE moves (rlimit.go).
func newConfinedDirSized(dir string, maxFileSize *atomic.Int64) *confinedDir {
	return &confinedDir{FS: sysfs.DirFS(dir), root: dir, maxFileSize: maxFileSize}
}

// check refuses a path that passes through a symlink. With last, the final
// component counts too (the operation would follow it).
func (d *confinedDir) check(path string, last bool) experimentalsys.Errno {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	if !last {
		parts = parts[:len(parts)-1]
	}
	cur := d.root
	for _, p := range parts {
		if p == "" || p == "." {
			continue
		}
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil {
			return 0 // does not exist yet: the operation itself answers
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return experimentalsys.ELOOP
		}
	}
	return 0
}

func (d *confinedDir) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if errno := d.check(path, true); errno != 0 {
		return nil, errno
	}
	// WASI has no file modes: create what a native guest creates under its
	// umask 022, so the workspace trees of both backends are the same.
	f, errno := d.FS.OpenFile(path, flag, guestFileMode)
	if errno != 0 {
		return nil, errno
	}
	return &sizedFile{File: f, max: d.maxFileSize}, 0
}

func (d *confinedDir) Lstat(path string) (wsys.Stat_t, experimentalsys.Errno) {
	if errno := d.check(path, false); errno != 0 {
		return wsys.Stat_t{}, errno
	}
	return d.FS.Lstat(path)
}

func (d *confinedDir) Stat(path string) (wsys.Stat_t, experimentalsys.Errno) {
	if errno := d.check(path, true); errno != 0 {
		return wsys.Stat_t{}, errno
	}
	return d.FS.Stat(path)
}

// Mkdir answers with the host's errno: wazero's own turns ENOTDIR (a file
// where the path needs a directory) into ENOENT, where the native guest's
// kernel answers ENOTDIR.
func (d *confinedDir) Mkdir(path string, perm fs.FileMode) experimentalsys.Errno {
	if errno := d.check(path, false); errno != 0 {
		return errno
	}
	return experimentalsys.UnwrapOSError(os.Mkdir(filepath.Join(d.root, path), guestDirMode))
}

// Modes of what a guest creates, as natively (0666 and 0777 under umask 022).
const (
	guestFileMode fs.FileMode = 0o644
	guestDirMode  fs.FileMode = 0o755
)

func (d *confinedDir) Chmod(path string, perm fs.FileMode) experimentalsys.Errno {
	if errno := d.check(path, true); errno != 0 {
		return errno
	}
	return d.FS.Chmod(path, perm)
}

func (d *confinedDir) Rename(from, to string) experimentalsys.Errno {
	if errno := d.check(from, false); errno != 0 {
		return errno
	}
	if errno := d.check(to, false); errno != 0 {
		return errno
	}
	return d.FS.Rename(from, to)
}

// Rmdir of the mount's own directory is EROFS, as natively (the mount's
// parent is the read-only root): the host directory behind the mount is
// never removed, even when it is empty and not a mount point.
func (d *confinedDir) Rmdir(path string) experimentalsys.Errno {
	if rel := strings.Trim(path, "/"); rel == "" || rel == "." {
		return experimentalsys.EROFS
	}
	if errno := d.check(path, false); errno != 0 {
		return errno
	}
	return d.FS.Rmdir(path)
}

func (d *confinedDir) Unlink(path string) experimentalsys.Errno {
	if errno := d.check(path, false); errno != 0 {
		return errno
	}
	return d.FS.Unlink(path)
}

func (d *confinedDir) Link(oldPath, newPath string) experimentalsys.Errno {
	if errno := d.check(oldPath, true); errno != 0 {
		return errno
	}
	if errno := d.check(newPath, false); errno != 0 {
		return errno
	}
	return d.FS.Link(oldPath, newPath)
}

// Symlink is refused: see confinedDir.
func (d *confinedDir) Symlink(string, string) experimentalsys.Errno {
	return experimentalsys.EPERM
}

func (d *confinedDir) Readlink(path string) (string, experimentalsys.Errno) {
	if errno := d.check(path, false); errno != 0 {
		return "", errno
	}
	return d.FS.Readlink(path)
}

func (d *confinedDir) Utimens(path string, atim, mtim int64) experimentalsys.Errno {
	if errno := d.check(path, true); errno != 0 {
		return errno
	}
	return d.FS.Utimens(path, atim, mtim)
}
