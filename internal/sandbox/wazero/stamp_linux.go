package wazero

import (
	"os"

	"golang.org/x/sys/unix"
)

// identify is the identity of the open file f (fstat: the file read, not
// whatever the path names now); ok is false when it cannot be had.
func identify(f *os.File) (id fileID, ok bool) {
	return identifyFD(int(f.Fd()))
}

// identifyFD is identify of the descriptor fd.
func identifyFD(fd int) (id fileID, ok bool) {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fileID{}, false
	}
	return fileID{
		Dev: st.Dev, Ino: st.Ino, Size: st.Size,
		MtimeNs: st.Mtim.Nano(), CtimeNs: st.Ctim.Nano(),
	}, true
}

// ownedPrivately says whether path is a file or directory (not a symlink)
// of the process's own user that no one else can write.
func ownedPrivately(path string) bool {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return false
	}
	kind := st.Mode & unix.S_IFMT
	return (kind == unix.S_IFREG || kind == unix.S_IFDIR) &&
		int(st.Uid) == os.Geteuid() && st.Mode&0o022 == 0
}
