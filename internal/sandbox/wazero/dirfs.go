package wazero

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"
)

// confinedDir is a host directory mounted writable into the guest that the
// guest cannot leave through symlinks. wazero resolves guest paths
// lexically (".." cannot climb out) but the host kernel follows symlinks,
// so a relative symlink such as "../../etc" would reach the host's files.
// So no operation here goes through a symlink: a path with a link on the
// way is refused (ELOOP), and so is an open, stat, chmod or utimens of a
// final link. The guest may make links (their target is text nothing on
// the host follows), list them, read them with readlink, rename and remove
// them; linkDir, above, resolves the links on a path the way the native
// guest's kernel does, inside the mount, before any of this sees it. And
// wazero itself never reopens a file by its path (the patch's item 16:
// a directory's rewind seeks its descriptor, an append toggle reopens the
// descriptor's file; without the patch, the guest cannot make links:
// confinedDir.links). Backend.Run
// still refuses a workspace that holds links (or a FIFO or a device)
// before the run: sandbox.CheckPlainTree, as the export does after it.
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
	// links: the guest may make symlinks, since wazero's files reopen by
	// descriptor (the patch's item 16). wazero as released reopens by
	// path: there Symlink is EPERM, as before the patch had the item.
	links bool

	// The mount's directory, opened once when linkFree first needs it
	// (dirfs_linux.go), and closed when d is collected.
	dirOnce sync.Once
	dirFD   int
	dirErr  error
}

func newConfinedDir(dir string, maxFileSize int64) *confinedDir {
	limit := new(atomic.Int64)
	limit.Store(maxFileSize)
	return newConfinedDirSized(dir, limit)
}

// newConfinedDirSized is newConfinedDir with a limit a guest's mounts
// share and its RLIMIT_FSIZE moves (rlimit.go).
func newConfinedDirSized(dir string, maxFileSize *atomic.Int64) *confinedDir {
	fsys := sysfs.DirFS(dir)
	r, ok := fsys.(interface{ ReopensByDescriptor() bool })
	return &confinedDir{FS: fsys, root: dir, maxFileSize: maxFileSize, links: ok && r.ReopensByDescriptor()}
}

// check refuses a path that passes through a symlink. With last, the final
// component counts too (the operation would follow it).
func (d *confinedDir) check(path string, last bool) experimentalsys.Errno {
	if !d.linkFree(path, last) {
		return experimentalsys.ELOOP
	}
	return 0
}

// walkLinkFree is linkFree by an lstat of each component: a path passes
// through no symlink as far as it exists (a missing name ends the walk:
// the operation itself answers).
func (d *confinedDir) walkLinkFree(path string, last bool) bool {
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
			return true
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return false
		}
	}
	return true
}

func (d *confinedDir) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	// O_CREAT|O_EXCL follows no final link: the kernel answers EEXIST for
	// one, wherever it points.
	if errno := d.check(path, !exclusive(flag)); errno != 0 {
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

// Link links oldPath itself, a symlink too (linkat(2) without
// AT_SYMLINK_FOLLOW, as link(2) on Linux and os.link's default): nothing
// follows it.
func (d *confinedDir) Link(oldPath, newPath string) experimentalsys.Errno {
	if errno := d.check(oldPath, false); errno != 0 {
		return errno
	}
	if errno := d.check(newPath, false); errno != 0 {
		return errno
	}
	return d.FS.Link(oldPath, newPath)
}

// Symlink makes a link at linkName whose target is the guest's text.
func (d *confinedDir) Symlink(target, linkName string) experimentalsys.Errno {
	if !d.links {
		return experimentalsys.EPERM
	}
	if errno := d.check(linkName, false); errno != 0 {
		return errno
	}
	return experimentalsys.UnwrapOSError(os.Symlink(target, filepath.Join(d.root, linkName)))
}

func (d *confinedDir) Readlink(path string) (string, experimentalsys.Errno) {
	if errno := d.check(path, false); errno != 0 {
		return "", errno
	}
	return d.FS.Readlink(path)
}

// exclusive says whether flag creates a file that must not exist
// (O_CREAT|O_EXCL): open(2) then follows no final symlink.
func exclusive(flag experimentalsys.Oflag) bool {
	return flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL
}

// lutimenser is a file system that sets the times of a path itself, not
// following a last symlink. wazero (patched, item 16) calls it for
// path_filestat_set_times without symlink_follow, where it would open the
// path, which follows the link; every layer of a writable mount passes it
// on.
type lutimenser interface {
	Lutimens(path string, atim, mtim int64) experimentalsys.Errno
}

// lutimens is fsys's Lutimens, or what wazero does where a file system
// has none: open the path for writing and set the open file's times.
func lutimens(fsys experimentalsys.FS, path string, atim, mtim int64) experimentalsys.Errno {
	if l, ok := fsys.(lutimenser); ok {
		return l.Lutimens(path, atim, mtim)
	}
	f, errno := fsys.OpenFile(path, experimentalsys.O_WRONLY, 0)
	if errno != 0 {
		return errno
	}
	defer f.Close()
	return f.Utimens(atim, mtim)
}

func (d *confinedDir) Utimens(path string, atim, mtim int64) experimentalsys.Errno {
	if errno := d.check(path, true); errno != 0 {
		return errno
	}
	return d.FS.Utimens(path, atim, mtim)
}
