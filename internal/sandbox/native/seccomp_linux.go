package native

import (
	"github.com/opencontainers/runc/libcontainer/configs"

	"github.com/apysup/apysup/internal/seccomp"
)

// defaultSeccomp is the policy of a Backend built without Config.Seccomp:
// the seccomp package's allowlist for CPython 3.11.
func defaultSeccomp() (*configs.Seccomp, error) { return seccomp.Default().Libcontainer() }

// SeccompProfile is the filter every guest runs under, as an OCI/Docker
// seccomp profile (JSON): `apysup seccomp export` prints it.
func SeccompProfile() ([]byte, error) { return seccomp.Default().OCI() }
