package wazero

import (
	"io"
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
//   - an existing file with O_TRUNC: EROFS; without it: EACCES;
//   - an existing name with O_CREAT|O_EXCL: EEXIST, before anything else;
//   - a directory with O_TRUNC: EISDIR.
//
// What it opens answers fsync and fdatasync as the native guest's files
// there do: done (sysfs.ReadFS's files said EBADF). On a mount served from
// memory, which holds no link, readlink is EINVAL of a name that is there
// and the lookup's errno of one that is not (it was ENOSYS).
//
// Every other change is EROFS once its path resolves as far as the native
// guest's kernel resolves it first (a missing directory on the way is
// ENOENT, a file there ENOTDIR): the whole path for chmod and utimes, its
// directory for mkdir, rmdir, unlink, rename, link and symlink; mkdir,
// link and symlink of a name that exists are EEXIST.
type readOnly struct{ experimentalsys.FS }

// newReadOnly wraps fsys (a mount that never changes) as a read-only mount.
// An fs.FS's files go past their end as Linux files do (pastEndFS).
func newReadOnly(fsys experimentalsys.FS) experimentalsys.FS {
	if a, ok := fsys.(*sysfs.AdaptFS); ok {
		fsys = &sysfs.AdaptFS{FS: pastEndFS{a.FS}}
	}
	return readOnly{&sysfs.ReadFS{FS: fsys}}
}

func (r readOnly) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	access := flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR)
	writes := access == experimentalsys.O_WRONLY || access == experimentalsys.O_RDWR
	if !writes && flag&(experimentalsys.O_CREAT|experimentalsys.O_TRUNC) == 0 {
		return synced(r.FS.OpenFile(name, flag, perm))
	}
	st, errno := r.FS.Stat(name)
	switch {
	case errno == 0 && flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL:
		return nil, experimentalsys.EEXIST
	case errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0:
		// As open(2) resolves the parent first: a missing parent is
		// ENOENT, a file there ENOTDIR; only in a directory is it EROFS.
		return nil, refused(r.dirResolves(name))
	case errno != 0:
		return nil, errno
	case st.Mode.IsDir() && (writes || flag&experimentalsys.O_TRUNC != 0):
		return nil, experimentalsys.EISDIR
	case st.Mode.IsDir():
		return synced(r.FS.OpenFile(name, flag&^experimentalsys.O_CREAT, perm))
	case flag&experimentalsys.O_TRUNC != 0:
		return nil, experimentalsys.EROFS
	case writes:
		return nil, experimentalsys.EACCES
	}
	return synced(r.FS.OpenFile(name, flag&^experimentalsys.O_CREAT, perm)) // O_CREAT of an existing file, read only
}

// syncedFile is a read-only mount's open file, whose data is always on
// its disk: fsync and fdatasync are done.
type syncedFile struct{ experimentalsys.File }

func (syncedFile) Sync() experimentalsys.Errno     { return 0 }
func (syncedFile) Datasync() experimentalsys.Errno { return 0 }

func synced(f experimentalsys.File, errno experimentalsys.Errno) (experimentalsys.File, experimentalsys.Errno) {
	if errno != 0 {
		return nil, errno
	}
	return syncedFile{f}, 0
}

func (r readOnly) Readlink(name string) (string, experimentalsys.Errno) {
	target, errno := r.FS.Readlink(name)
	if errno != experimentalsys.ENOSYS { // a mount of the host's files reads its links
		return target, errno
	}
	if _, errno := r.FS.Lstat(name); errno != 0 {
		return "", errno
	}
	return "", experimentalsys.EINVAL
}

// resolves answers as the kernel does while it looks name up: 0 if name
// exists, else the lookup's errno.
func (r readOnly) resolves(name string) experimentalsys.Errno {
	_, errno := r.FS.Stat(name)
	return errno
}

// dirResolves answers as the kernel does while it looks up the directory
// of name: 0 if it is a directory, else ENOTDIR or the lookup's errno.
func (r readOnly) dirResolves(name string) experimentalsys.Errno {
	st, errno := r.FS.Stat(path.Dir(name))
	switch {
	case errno != 0:
		return errno
	case !st.Mode.IsDir():
		return experimentalsys.ENOTDIR
	}
	return 0
}

// refused is EROFS, or the first errno of the lookups before it.
func refused(lookups ...experimentalsys.Errno) experimentalsys.Errno {
	for _, errno := range lookups {
		if errno != 0 {
			return errno
		}
	}
	return experimentalsys.EROFS
}

func (r readOnly) Mkdir(name string, perm fs.FileMode) experimentalsys.Errno {
	errno := r.dirResolves(name)
	if errno == 0 && r.resolves(name) == 0 {
		return experimentalsys.EEXIST
	}
	return refused(errno)
}

func (r readOnly) Rmdir(name string) experimentalsys.Errno { return refused(r.dirResolves(name)) }

func (r readOnly) Unlink(name string) experimentalsys.Errno { return refused(r.dirResolves(name)) }

func (r readOnly) Rename(from, to string) experimentalsys.Errno {
	return refused(r.dirResolves(from), r.dirResolves(to))
}

func (r readOnly) Link(oldName, newName string) experimentalsys.Errno {
	return refused(r.resolves(oldName), r.dirResolves(newName), r.taken(newName))
}

func (r readOnly) Symlink(oldName, linkName string) experimentalsys.Errno {
	return refused(r.dirResolves(linkName), r.taken(linkName))
}

// taken is EEXIST when name is there: link(2) and symlink(2) find the new
// name taken before they ask the mount for a change (EROFS).
func (r readOnly) taken(name string) experimentalsys.Errno {
	if _, errno := r.FS.Lstat(name); errno == 0 {
		return experimentalsys.EEXIST
	}
	return 0
}

func (r readOnly) Chmod(name string, perm fs.FileMode) experimentalsys.Errno {
	return refused(r.resolves(name))
}

func (r readOnly) Utimens(name string, atim, mtim int64) experimentalsys.Errno {
	return refused(r.resolves(name))
}

// pastEndFS serves an fs.FS's regular files with offsets past their end,
// as Linux serves any file: lseek(2) there succeeds and a read is empty.
// The mounts served from memory (the generated /etc, the job, the guest's
// files) refused such a seek or pread with EINVAL, io.Seeker's and
// io.ReaderAt's rule for fstest and embed files. Their files never change,
// so the size read at the open holds.
type pastEndFS struct{ fs.FS }

func (p pastEndFS) Open(name string) (fs.File, error) {
	f, err := p.FS.Open(name)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	seeker, isSeeker := f.(io.Seeker)
	readerAt, isReaderAt := f.(io.ReaderAt)
	_, unsized := f.(unsizedFile)
	if err != nil || !fi.Mode().IsRegular() || !isSeeker || !isReaderAt || unsized {
		return f, nil
	}
	return &pastEndFile{File: f, seeker: seeker, readerAt: readerAt, size: fi.Size(), past: -1}, nil
}

// unsizedFile is a file whose stat says nothing of its size (procfs.go's:
// 0, as the proc file system says): it answers its own seeks and preads.
type unsizedFile interface{ unsized() }

type pastEndFile struct {
	fs.File
	seeker   io.Seeker
	readerAt io.ReaderAt
	size     int64
	past     int64 // the offset, while it is past the end; -1 otherwise
}

func (f *pastEndFile) Seek(offset int64, whence int) (int64, error) {
	var base int64
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		base = f.past
		if base < 0 {
			cur, err := f.seeker.Seek(0, io.SeekCurrent)
			if err != nil {
				return 0, err
			}
			base = cur
		}
	case io.SeekEnd:
		base = f.size
	default:
		return 0, fs.ErrInvalid
	}
	target := base + offset
	if target < 0 || (offset > 0 && target < base) {
		return 0, fs.ErrInvalid // EINVAL, as Linux answers before the start
	}
	if target > f.size {
		f.past = target
		return target, nil
	}
	f.past = -1
	return f.seeker.Seek(target, io.SeekStart)
}

func (f *pastEndFile) Read(buf []byte) (int, error) {
	if f.past >= 0 {
		return 0, io.EOF
	}
	return f.File.Read(buf)
}

func (f *pastEndFile) ReadAt(buf []byte, off int64) (int, error) {
	if off >= f.size && off >= 0 {
		return 0, io.EOF
	}
	return f.readerAt.ReadAt(buf, off)
}
