//go:build !linux

package wazero

// linkFree is walkLinkFree: see dirfs_linux.go.
func (d *confinedDir) linkFree(path string, last bool) bool {
	return d.walkLinkFree(path, last)
}
