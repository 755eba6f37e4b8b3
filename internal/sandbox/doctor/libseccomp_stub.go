//go:build !seccomp

package doctor

// Without the seccomp build tag libcontainer silently installs no filter, so
// this build must not run guests.
func checkLibseccomp() Check {
	return fail("libseccomp", CodeSeccompUnavailable,
		"this binary was built without -tags seccomp: libcontainer would install no syscall filter",
		"rebuild with CGO_ENABLED=1 go build -tags seccomp (needs libseccomp-dev and pkg-config)")
}
