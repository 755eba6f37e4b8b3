package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// MountTmpfs mounts a tmpfs on the directory dir holding at most bytes and
// files (nr_inodes), nosuid and nodev, when this process may mount, and
// returns the function that unmounts it (lazily). A process that may not
// mount (not root, or root without CAP_SYS_ADMIN, as in a container: EPERM)
// gets dir left as it is and a nil unmount, with no error: the caller
// bounds it some other way. Any other failure is an error.
func MountTmpfs(dir string, mode os.FileMode, bytes, files int64) (unmount func() error, err error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=%#o", bytes, files, mode.Perm())
	switch err := mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); {
	case err == nil:
		return func() error { return unix.Unmount(dir, unix.MNT_DETACH) }, nil
	case errors.Is(err, unix.EPERM):
		return nil, nil
	default:
		return nil, fmt.Errorf("tmpfs on %s: %w", dir, err)
	}
}

// mount is unix.Mount; tests replace it.
var mount = unix.Mount

// DetachMountsUnder lazily unmounts every mount below dir and dir itself,
// deepest first: what a dead process left mounted in a directory about to
// be removed.
//
// mountinfo names mount points by absolute, resolved paths: a relative
// dir (apysup serve --state st) or one through a link matched none of
// them, and the mounts stayed.
func DetachMountsUnder(dir string) {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(dir))
	if err != nil {
		return
	}
	slices.SortFunc(mounts, func(a, b *mountinfo.Info) int { return len(b.Mountpoint) - len(a.Mountpoint) })
	for _, m := range mounts {
		_ = unix.Unmount(m.Mountpoint, unix.MNT_DETACH)
	}
}
