//go:build !linux

package supervisor

import (
	"os"

	"github.com/apysup/apysup/internal/sandbox"
)

// mountWorkspace makes dir, a plain directory: off Linux there is no tmpfs
// to bound it, so the limits apply to the final snapshot only (as on Linux
// without root).
func mountWorkspace(dir string, _ sandbox.Limits) (unmount func() error, err error) {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	return func() error { return nil }, nil
}
