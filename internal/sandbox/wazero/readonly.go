package wazero

import (
	"io/fs"
	"path"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// readOnly is a read-only mount that refuses a write where the native
// guest's open(2) does, with its errno, instead of later. sysfs.AdaptFS
// opened any file "for writing" and the first write failed with EBADF,
// and sysfs.ReadFS answers ENOSYS; natively (a read-only bind mount, files
// the guest's uid does not own) open(2) refuses:
//   - a directory opened for writing: EISDIR;
//   - a missing file with O_CREAT: EROFS in a directory, ENOENT without
//     one (without O_CREAT, ENOENT as ever);
//   - an existing file with O_TRUNC: EROFS; without it: EACCES.
//
// Every other change (mkdir, unlink, rename, chmod, utimes, ...) is EROFS,
// as sysfs.ReadFS answers.
type readOnly struct{ experimentalsys.FS }

// newReadOnly wraps fsys (a mount that never changes) as a read-only mount.
func newReadOnly(fsys experimentalsys.FS) experimentalsys.FS {
	return readOnly{&sysfs.ReadFS{FS: fsys}}
}

func (r readOnly) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	access := flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR)
	writes := access == experimentalsys.O_WRONLY || access == experimentalsys.O_RDWR
	if !writes && flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC) == 0 {
		return r.FS.OpenFile(name, flag, perm)
	}
	st, errno := r.FS.Stat(name)
	switch {
	case errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0:
		// As open(2) resolves the parent first: a missing parent is
		// ENOENT, a file there ENOTDIR; only in a directory is it EROFS.
		parent, perrno := r.FS.Stat(path.Dir(name))
		switch {
		case perrno != 0:
			return nil, perrno
		case !parent.Mode.IsDir():
			return nil, experimentalsys.ENOTDIR
		}
		return nil, experimentalsys.EROFS
	case errno != 0:
		return nil, errno
	case st.Mode.IsDir() && writes:
		return nil, experimentalsys.EISDIR
	case st.Mode.IsDir():
		return r.FS.OpenFile(name, flag&^(experimentalsys.O_CREAT|experimentalsys.O_TRUNC), perm)
	case flag&experimentalsys.O_TRUNC != 0:
		return nil, experimentalsys.EROFS
	case writes:
		return nil, experimentalsys.EACCES
	}
	return r.FS.OpenFile(name, flag&^experimentalsys.O_CREAT, perm) // O_CREAT of an existing file, read only
}
