//go:build !linux

package wazero

import experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

// Lutimens is Utimens where the guest cannot make links (wazero's files
// reopen by path here: confinedDir.links), and Backend.Run refuses a
// workspace that holds any.
func (d *confinedDir) Lutimens(path string, atim, mtim int64) experimentalsys.Errno {
	return d.Utimens(path, atim, mtim)
}
