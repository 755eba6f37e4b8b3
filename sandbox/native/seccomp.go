package native

import (
	"github.com/opencontainers/runc/libcontainer/configs"

	"github.com/apysup/apysup/seccomp"
)

// defaultSeccomp is the policy of a Backend built without Config.Seccomp:
// the seccomp package's allowlist for CPython 3.11.
func defaultSeccomp() (*configs.Seccomp, error) { return seccomp.Default().Libcontainer() }
