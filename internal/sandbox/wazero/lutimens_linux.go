package wazero

import (
	"path/filepath"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// utimeOmit is Linux's UTIME_OMIT: a time utimensat leaves as it is.
const utimeOmit = (1 << 30) - 2

// Lutimens sets the times of path itself, a link's own when it is one
// (utime with follow_symlinks=False; see lutimens).
func (d *confinedDir) Lutimens(path string, atim, mtim int64) experimentalsys.Errno {
	if errno := d.check(path, false); errno != 0 {
		return errno
	}
	if atim == experimentalsys.UTIME_OMIT && mtim == experimentalsys.UTIME_OMIT {
		return 0
	}
	ts := [2]unix.Timespec{unix.NsecToTimespec(atim), unix.NsecToTimespec(mtim)}
	for i, t := range [2]int64{atim, mtim} {
		if t == experimentalsys.UTIME_OMIT {
			ts[i] = unix.Timespec{Nsec: utimeOmit}
		}
	}
	err := unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(d.root, path), ts[:], unix.AT_SYMLINK_NOFOLLOW)
	return experimentalsys.UnwrapOSError(err)
}
