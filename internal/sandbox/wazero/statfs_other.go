//go:build !linux

package wazero

import experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

// statfs has no host answer off Linux: statvfs is ENOSYS there.
func statfs(string) (fsStat, experimentalsys.Errno) { return fsStat{}, experimentalsys.ENOSYS }
