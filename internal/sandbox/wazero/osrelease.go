package wazero

import (
	"io"
	"os"
)

// The host's os-release, at the path the native guest reads it from:
// its /usr is the host's, read-only, so platform.freedesktop_os_release()
// answers with the host's distribution there (the guest's generated /etc
// has no os-release of its own, so the function's second choice,
// /usr/lib/os-release, is the one it finds). The wazero guest's /usr/lib
// is the stdlib tree, which carries the same file (stdlibTree.addFile):
// the host's bytes, read by Load and handed to a child in its load
// message, or nothing where the host has none, as natively.
const (
	osReleaseHostPath = "/usr/lib/os-release"
	osReleaseName     = "os-release" // in the stdlib tree, mounted at /usr/lib
	// maxOSReleaseBytes bounds what is read (Debian's is 200 bytes): a
	// larger file is left out, and the guest finds none.
	maxOSReleaseBytes = 4 << 10
)

// hostOSRelease returns the host's os-release, or nil when it has none
// that is a regular file of at most maxOSReleaseBytes.
func hostOSRelease() []byte {
	f, err := os.Open(osReleaseHostPath)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, maxOSReleaseBytes+1))
	if err != nil || len(data) > maxOSReleaseBytes {
		return nil
	}
	return data
}
