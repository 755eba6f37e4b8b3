package supervisor

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

// mountWorkspace makes dir and, when the supervisor runs as root, mounts a
// tmpfs on it bounded by limits.WorkspaceBytes and WorkspaceFiles, so a
// guest can neither fill the host's disk nor see its free space. Pages a
// native guest writes are charged to its own memory cgroup. Without root
// (possible only for the wazero backend) the workspace is a plain directory
// and the bounds apply to the final snapshot only.
func mountWorkspace(dir string, limits sandbox.Limits) (unmount func() error, err error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	if os.Geteuid() != 0 {
		return func() error { return nil }, nil
	}
	opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0755", limits.WorkspaceBytes, limits.WorkspaceFiles)
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return nil, fmt.Errorf("workspace tmpfs: %w", err)
	}
	return func() error { return unix.Unmount(dir, unix.MNT_DETACH) }, nil
}

// unmountStale detaches the workspace tmpfs of a dead supervisor's run
// directory, if it is mounted.
func unmountStale(dir string) {
	_ = unix.Unmount(dir, unix.MNT_DETACH) // EINVAL when not mounted
}
