//go:build !linux

package wazero

import experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

// fsStat is statfs(2)'s answer, the fields statvfs reads.
type fsStat struct {
	magic                                                             int64
	bsize, frsize, blocks, bfree, bavail, files, ffree, fsid, namelen uint64
	flags                                                             uint64
}

// statfs has no host answer off Linux: statvfs is ENOSYS there.
func statfs(string) (fsStat, experimentalsys.Errno) { return fsStat{}, experimentalsys.ENOSYS }
