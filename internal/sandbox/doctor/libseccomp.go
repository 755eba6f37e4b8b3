//go:build seccomp

package doctor

import (
	"fmt"

	lcseccomp "github.com/opencontainers/runc/libcontainer/seccomp"
)

func checkLibseccomp() Check {
	const name = "libseccomp"
	major, minor, micro := lcseccomp.Version()
	v := fmt.Sprintf("%d.%d.%d", major, minor, micro)
	if major < 2 || (major == 2 && minor < 5) {
		return fail(name, CodeSeccompUnavailable, "libseccomp "+v+" is too old (need >= 2.5)",
			"apt-get install -y libseccomp2")
	}
	return ok(name, "libseccomp "+v+" linked into libcontainer")
}
