package supervisor

import (
	"fmt"
	"os"

	"github.com/apysup/apysup/internal/sandbox"
)

// mountWorkspace makes dir and, when the supervisor may mount (root with
// CAP_SYS_ADMIN, on Linux), mounts a tmpfs on it bounded by
// limits.WorkspaceBytes and WorkspaceFiles, so a guest can neither fill the
// host's disk nor see its free space. Pages a native guest writes are
// charged to its own memory cgroup. Otherwise (possible only for the wazero
// backend: not root, root in a container that may not mount, or off Linux)
// the workspace is a plain directory, bounded by the wazero backend's
// budget as the guest writes and by the snapshot's limits at the end.
func mountWorkspace(dir string, limits sandbox.Limits) (unmount func() error, err error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	unmount, err = sandbox.MountTmpfs(dir, 0o755, limits.WorkspaceBytes, limits.WorkspaceFiles)
	if err != nil {
		return nil, fmt.Errorf("workspace %w", err)
	}
	if unmount == nil {
		unmount = func() error { return nil }
	}
	return unmount, nil
}
