package wazero

import (
	"errors"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"
)

// linkFree reports whether path passes through no symlink as far as it
// exists, its last component included when last is set: one openat2(2)
// from the mount's directory with RESOLVE_NO_SYMLINKS, where
// walkLinkFree takes an lstat per component (a path three deep took 17
// us to stat under wazero with the walk, and twice that once linkDir
// walked it too). A name that does not exist, or is not a directory,
// ends the lookup as it ends the walk: the operation itself answers.
// Without openat2 (Linux before 5.6), the walk.
func (d *confinedDir) linkFree(path string, last bool) bool {
	dir, err := d.dir()
	if err != nil {
		return d.walkLinkFree(path, last)
	}
	name := strings.Trim(path, "/")
	if name == "" {
		name = "."
	}
	flags := unix.O_PATH | unix.O_CLOEXEC
	if !last {
		flags |= unix.O_NOFOLLOW // O_PATH opens a final link itself
	}
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS}
	for range 8 {
		fd, err := unix.Openat2(dir, name, &how)
		switch {
		case err == nil:
			unix.Close(fd)
			return true
		case errors.Is(err, unix.EINTR), errors.Is(err, unix.EAGAIN):
			continue // a rename raced the lookup
		case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EXDEV):
			return false // a link on the way, or a path that would leave
		case errors.Is(err, unix.ENOSYS):
			return d.walkLinkFree(path, last)
		default:
			return true // missing, not a directory, not searchable
		}
	}
	return d.walkLinkFree(path, last)
}

// dir is the mount's directory, O_PATH, opened on first use.
func (d *confinedDir) dir() (int, error) {
	d.dirOnce.Do(func() {
		d.dirFD, d.dirErr = unix.Open(d.root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if d.dirErr == nil {
			runtime.AddCleanup(d, func(fd int) { unix.Close(fd) }, d.dirFD)
		}
	})
	return d.dirFD, d.dirErr
}
