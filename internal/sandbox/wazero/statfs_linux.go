package wazero

import (
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"golang.org/x/sys/unix"
)

// statfs is statfs(2) of a host path. The fsid's two words are packed as
// glibc's statvfs packs them: the first in the low half.
func statfs(path string) (fsStat, experimentalsys.Errno) {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return fsStat{}, experimentalsys.UnwrapOSError(err)
	}
	return fsStat{magic: st.Type, bsize: uint64(st.Bsize), frsize: uint64(st.Frsize), blocks: st.Blocks,
		bfree: st.Bfree, bavail: st.Bavail, files: st.Files, ffree: st.Ffree,
		fsid:    uint64(uint32(st.Fsid.Val[0])) | uint64(uint32(st.Fsid.Val[1]))<<32,
		namelen: uint64(st.Namelen), flags: uint64(st.Flags)}, 0
}
