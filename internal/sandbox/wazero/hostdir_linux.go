package wazero

import (
	"errors"
	"io/fs"
	"os"
	"path"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"
	"golang.org/x/sys/unix"
)

// resolvesBeneath: Linux resolves a path beneath a directory (openat2), so
// the host's zoneinfo can be mounted.
const resolvesBeneath = true

// hostDir is a host directory the guest reads, never writes, and cannot
// leave. wazero's own WithReadOnlyDirMount joins guest paths to the host
// path and lets the kernel follow whatever symlinks it meets:
// /usr/share/zoneinfo/localtime -> /etc/localtime handed the guest the
// host's /etc. Here the kernel resolves every path beneath the
// directory's descriptor (openat2(2) with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS): a symlink that stays inside is followed (zoneinfo
// has hundreds: right/Pacific/Yap -> Port_Moresby, Canada/Pacific ->
// ../America/Vancouver), one that leaves it, absolute or climbing out with
// "..", is dangling (ENOENT), and /proc's magic links are refused (ELOOP).
// Nothing is checked and then used, so a host that changes the tree
// concurrently cannot race the guest out of it either. The descriptor is
// opened once per Interpreter and shared by every run, read-only.
type hostDir struct {
	fd   int // O_PATH|O_DIRECTORY
	path string
}

func openHostDir(dir string) (*hostDir, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	d := &hostDir{fd: fd, path: dir}
	// Kernels before 5.6 lack openat2: refuse the mount rather than
	// resolve paths some weaker way.
	if f, err := d.open(".", unix.O_PATH, true); err != nil {
		d.Close()
		return nil, &os.PathError{Op: "openat2", Path: dir, Err: err}
	} else {
		f.Close()
	}
	return d, nil
}

// Close releases the directory; only once no run uses it.
func (d *hostDir) Close() error { return unix.Close(d.fd) }

// open resolves name beneath the directory, following a final symlink
// when follow is set.
func (d *hostDir) open(name string, flags int, follow bool) (*os.File, error) {
	if name == "" {
		name = "."
	}
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	if flags&unix.O_PATH == 0 {
		flags |= unix.O_NOCTTY // openat2 refuses it beside O_PATH
	}
	how := unix.OpenHow{
		Flags:   uint64(flags | unix.O_CLOEXEC),
		Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
	}
	// EAGAIN: a rename or mount raced the resolution, which the kernel
	// refuses rather than risk an escape; try again a few times.
	for range 8 {
		fd, err := unix.Openat2(d.fd, name, &how)
		switch {
		case err == nil:
			return os.NewFile(uintptr(fd), path.Join(d.path, name)), nil
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue
		case errors.Is(err, unix.EXDEV):
			// The path leads out of the directory: as if it dangled.
			return nil, unix.ENOENT
		default:
			return nil, err
		}
	}
	return nil, unix.EAGAIN
}

// Open implements fs.FS for sysfs.AdaptFS, which makes its files (reads,
// directory listings and their rewinds, which reopen through here). The
// guest may open whatever it finds, never blocking on it: O_NONBLOCK makes
// a FIFO's open return at once.
func (d *hostDir) Open(name string) (fs.File, error) {
	f, err := d.open(name, unix.O_RDONLY|unix.O_NONBLOCK, true)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	return f, nil
}

// FS is the directory as the guest's read-only mount.
func (d *hostDir) FS() experimentalsys.FS {
	return newReadOnly(&hostDirFS{FS: &sysfs.AdaptFS{FS: d}, dir: d})
}

// hostDirFS adds what sysfs.AdaptFS, made for fs.FS, does not know:
// symlinks. Lstat and Readlink see a link itself, Stat follows it within
// the directory, as on a native guest's read-only /usr. Writes are refused
// by readOnly, which FS wraps it in.
type hostDirFS struct {
	experimentalsys.FS
	dir *hostDir
}

func (m *hostDirFS) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	// AdaptFS opens through fs.FS.Open, which always follows: a guest that
	// asks not to follow a final symlink (O_NOFOLLOW) is answered ELOOP
	// here. A link the host swaps in between is still resolved beneath
	// the directory: this is the guest's request, not its confinement.
	if flag&experimentalsys.O_NOFOLLOW != 0 {
		if st, errno := m.Lstat(name); errno == 0 && st.Mode&fs.ModeSymlink != 0 {
			return nil, experimentalsys.ELOOP
		}
	}
	return m.FS.OpenFile(name, flag, perm)
}

func (m *hostDirFS) Stat(name string) (wsys.Stat_t, experimentalsys.Errno) {
	return m.stat(name, true)
}

func (m *hostDirFS) Lstat(name string) (wsys.Stat_t, experimentalsys.Errno) {
	return m.stat(name, false)
}

func (m *hostDirFS) stat(name string, follow bool) (wsys.Stat_t, experimentalsys.Errno) {
	f, err := m.dir.open(name, unix.O_PATH, follow)
	if err != nil {
		return wsys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return wsys.Stat_t{}, experimentalsys.UnwrapOSError(err)
	}
	return wsys.NewStat_t(fi), 0
}

// Readlink reads a link's target, wherever it points (natively the guest
// reads the same text); following it is what stays inside.
func (m *hostDirFS) Readlink(name string) (string, experimentalsys.Errno) {
	f, err := m.dir.open(name, unix.O_PATH, false)
	if err != nil {
		return "", experimentalsys.UnwrapOSError(err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return "", experimentalsys.UnwrapOSError(err)
	} else if fi.Mode()&fs.ModeSymlink == 0 {
		return "", experimentalsys.EINVAL // readlinkat(fd, "") says ENOENT
	}
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlinkat(int(f.Fd()), "", buf)
	if err != nil {
		return "", experimentalsys.UnwrapOSError(err)
	}
	return string(buf[:n]), 0
}
