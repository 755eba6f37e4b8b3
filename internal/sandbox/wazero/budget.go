package wazero

import (
	"io/fs"
	"path/filepath"
	"sync"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// dirBudget bounds the bytes and files a guest keeps in one writable host
// directory, as a tmpfs's size= and nr_inodes= do natively: the out
// directory is such a tmpfs natively (sandbox.OutDirBytes,
// sandbox.OutDirFiles) and a plain host directory here, which a guest
// filled with 490 MiB before this existed; the workspace is one natively
// (Limits.WorkspaceBytes, WorkspaceFiles) and here only when the
// supervisor runs as root, otherwise a plain directory the guest could
// fill with FileSizeBytes in file after file.
//
// What is counted is what the guest's files hold on the host, credited
// back when freed: the size of every file that still has a name or is
// still open (an unlinked file the guest holds open keeps its bytes, as on
// any filesystem), one file per name (tmpfs charges an inode for every
// hard link too) or per open, nameless file, and the directory itself.
// A file costs its apparent size in whole pages, as tmpfs charges a page
// for every page a file has data in: a file of 5,000 bytes costs two, so
// as many small files fit as natively (charged by the byte, half as many
// again did). A hole costs what data would, where tmpfs charges nothing
// for it: a native guest gets more out of sparse files, never the other
// way round. wazero has no ENOSPC: a write past the
// budget is cut short, then refused with EIO, which the WASI build's
// writes, opens that create, mkdir and link turn into ENOSPC
// (python/wasi/_apysup_errno.c), as the native guest's tmpfs answers.
//
// Every change to the tree goes through budgetDir and its files: the
// directory is private to the run, and only the guest, one thread in one
// call at a time, writes into it. Inodes are keyed by device and number.
type dirBudget struct {
	mu                 sync.Mutex
	maxBytes, maxFiles int64
	bytes, files       int64
	inodes             map[inodeKey]inodeUse
}

type inodeKey struct{ dev, ino uint64 }

type inodeUse struct {
	dir   bool
	size  int64 // apparent size; 0 for a directory
	links int64 // names in the tree
	open  int64 // files of the guest open on it
}

// use is what the inode costs: nothing once it has neither a name nor an
// open file.
func (u inodeUse) use() (bytes, files int64) {
	if u.links <= 0 && u.open <= 0 {
		return 0, 0
	}
	return pages(u.size), max(u.links, 1)
}

// tmpfsPage is the unit tmpfs charges its files' data by.
const tmpfsPage = 4096

// pages is size in whole pages, as tmpfs charges it.
func pages(size int64) int64 { return (size + tmpfsPage - 1) &^ (tmpfsPage - 1) }

func keyOf(st wsys.Stat_t) inodeKey { return inodeKey{st.Dev, uint64(st.Ino)} }

// change applies f to the inode st describes. When that would grow the
// bytes or files past a bound, nothing changes and it answers false;
// shrinking always succeeds. An inode not seen before (one the guest just
// created) starts from what the host reports, and all of it is charged.
func (b *dirBudget) change(st wsys.Stat_t, f func(*inodeUse)) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := keyOf(st)
	cur, seen := b.inodes[k]
	var ob, of int64
	if seen {
		ob, of = cur.use()
	} else {
		cur = useOf(st)
	}
	next := cur
	f(&next)
	nb, nf := next.use()
	if (nb > ob && b.bytes+nb-ob > b.maxBytes) || (nf > of && b.files+nf-of > b.maxFiles) {
		return false
	}
	b.bytes, b.files = b.bytes+nb-ob, b.files+nf-of
	if next.links <= 0 && next.open <= 0 {
		delete(b.inodes, k)
	} else {
		b.inodes[k] = next
	}
	return true
}

// useOf is what the host says of an inode the budget has not seen.
func useOf(st wsys.Stat_t) inodeUse {
	if st.Mode.IsDir() {
		return inodeUse{dir: true, links: 1} // its name; Nlink counts its subdirectories' ".."
	}
	// Nlink may count names outside the tree: the budget never counts too
	// little.
	return inodeUse{size: st.Size, links: int64(st.Nlink)}
}

// adopt counts an inode that was there before the guest, past the bounds
// if need be; once only, however many names it has in the tree.
func (b *dirBudget) adopt(st wsys.Stat_t) {
	b.mu.Lock()
	defer b.mu.Unlock()
	k := keyOf(st)
	if _, seen := b.inodes[k]; seen {
		return
	}
	u := useOf(st)
	ub, uf := u.use()
	b.bytes, b.files = b.bytes+ub, b.files+uf
	b.inodes[k] = u
}

// roomForFile says whether one more file fits.
func (b *dirBudget) roomForFile() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.files < b.maxFiles
}

// maxSize is the largest size the inode st describes may grow to.
func (b *dirBudget) maxSize(st wsys.Stat_t) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	size := st.Size
	if u, ok := b.inodes[keyOf(st)]; ok {
		size = u.size
	}
	// Its pages, and every page left (the budget is in whole pages).
	return pages(size) + (b.maxBytes-b.bytes)&^(tmpfsPage-1)
}

// used reports the bytes and files counted.
func (b *dirBudget) used() (bytes, files int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.bytes, b.files
}

// budgetDir is a writable mount whose tree is bounded by a dirBudget.
type budgetDir struct {
	experimentalsys.FS
	b *dirBudget
}

// newBudgetDir bounds fsys, the host directory dir, counting what it holds
// already (the directory itself is one file, as tmpfs counts its root
// inode). What it holds is counted even past the bounds: the guest may
// then only free.
func newBudgetDir(fsys experimentalsys.FS, dir string, maxBytes, maxFiles int64) (*budgetDir, error) {
	b := &dirBudget{maxBytes: maxBytes, maxFiles: maxFiles, inodes: map[inodeKey]inodeUse{}}
	err := filepath.WalkDir(dir, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		b.adopt(wsys.NewStat_t(fi))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return &budgetDir{FS: fsys, b: b}, nil
}

func (d *budgetDir) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	_, errno := d.FS.Lstat(path)
	creating := errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0
	if creating && !d.b.roomForFile() {
		return nil, experimentalsys.EIO
	}
	f, errno := d.FS.OpenFile(path, flag, perm)
	if errno != 0 {
		return nil, errno
	}
	st, errno := f.Stat()
	if errno != 0 {
		f.Close()
		return nil, errno
	}
	// O_TRUNC may have freed bytes: the size is the host's.
	if !d.b.change(st, func(u *inodeUse) { u.open++; u.size = sizeOf(st) }) {
		f.Close()
		if creating {
			_ = d.FS.Unlink(path)
		}
		return nil, experimentalsys.EIO
	}
	return &budgetFile{File: f, b: d.b, st: st}, 0
}

func sizeOf(st wsys.Stat_t) int64 {
	if st.Mode.IsDir() {
		return 0
	}
	return st.Size
}

func (d *budgetDir) Mkdir(path string, perm fs.FileMode) experimentalsys.Errno {
	return d.make(path, func() experimentalsys.Errno { return d.FS.Mkdir(path, perm) }, d.FS.Rmdir)
}

// Symlink charges the link a file, and its target's length in bytes (a
// tmpfs link takes an inode, and a page when it is long).
func (d *budgetDir) Symlink(target, linkName string) experimentalsys.Errno {
	return d.make(linkName, func() experimentalsys.Errno { return d.FS.Symlink(target, linkName) }, d.FS.Unlink)
}

// make makes path with op when one more file fits, and charges what it
// made, or removes it with undo.
func (d *budgetDir) make(path string, op func() experimentalsys.Errno, undo func(string) experimentalsys.Errno) experimentalsys.Errno {
	if !d.b.roomForFile() {
		if _, errno := d.FS.Lstat(path); errno == 0 {
			return experimentalsys.EEXIST // what mkdir and symlink say first
		}
		return experimentalsys.EIO
	}
	if errno := op(); errno != 0 {
		return errno
	}
	st, errno := d.FS.Lstat(path)
	if errno == 0 && !d.b.change(st, func(*inodeUse) {}) {
		_ = undo(path) // lost a race the guest has no second thread for
		return experimentalsys.EIO
	}
	return errno
}

// unlinked credits a name removed from the inode st describes.
func (d *budgetDir) unlinked(st wsys.Stat_t) {
	d.b.change(st, func(u *inodeUse) {
		if u.dir {
			u.links = 0
		} else {
			u.links--
		}
	})
}

func (d *budgetDir) Rmdir(path string) experimentalsys.Errno { return d.remove(path, d.FS.Rmdir) }

func (d *budgetDir) Unlink(path string) experimentalsys.Errno { return d.remove(path, d.FS.Unlink) }

// remove removes path with op, and credits the name.
func (d *budgetDir) remove(path string, op func(string) experimentalsys.Errno) experimentalsys.Errno {
	st, errno := d.FS.Lstat(path)
	if errno != 0 {
		return errno
	}
	if errno := op(path); errno != 0 {
		return errno
	}
	d.unlinked(st)
	return 0
}

func (d *budgetDir) Link(oldPath, newPath string) experimentalsys.Errno {
	st, errno := d.FS.Lstat(oldPath)
	if errno != 0 {
		return errno
	}
	if st.Mode.IsDir() {
		return experimentalsys.EPERM // as link(2) says, before any budget
	}
	if !d.b.change(st, func(u *inodeUse) { u.links++ }) {
		return experimentalsys.EIO
	}
	if errno := d.FS.Link(oldPath, newPath); errno != 0 {
		d.b.change(st, func(u *inodeUse) { u.links-- })
		return errno
	}
	return 0
}

// linkFree is the mount's own (linkDir's fast path).
func (d *budgetDir) linkFree(path string, last bool) bool {
	lf, ok := d.FS.(linkFreer)
	return ok && lf.linkFree(path, last)
}

func (d *budgetDir) Lutimens(path string, atim, mtim int64) experimentalsys.Errno {
	return lutimens(d.FS, path, atim, mtim)
}

// Rename frees what it replaces.
func (d *budgetDir) Rename(from, to string) experimentalsys.Errno {
	src, errno := d.FS.Lstat(from)
	if errno != 0 {
		return errno
	}
	dst, dstErr := d.FS.Lstat(to)
	if errno := d.FS.Rename(from, to); errno != 0 {
		return errno
	}
	if dstErr == 0 && keyOf(dst) != keyOf(src) {
		d.unlinked(dst)
	}
	return 0
}

// budgetFile is an open file of a budgetDir: what its writes and
// truncations grow the file by is charged before they happen, and the
// file's real size settles the account after.
type budgetFile struct {
	experimentalsys.File
	b      *dirBudget
	st     wsys.Stat_t // identity only: the budget keeps the size
	closed bool
}

// reserve lets the file grow to end, or answers how far it may.
func (f *budgetFile) reserve(end int64) (limit int64, ok bool) {
	if f.b.change(f.st, func(u *inodeUse) { u.size = max(u.size, end) }) {
		return end, true
	}
	return f.b.maxSize(f.st), false
}

// settle records the size the host reports.
func (f *budgetFile) settle() {
	if st, errno := f.File.Stat(); errno == 0 {
		f.b.change(f.st, func(u *inodeUse) { u.size = sizeOf(st) })
	}
}

func (f *budgetFile) Write(buf []byte) (int, experimentalsys.Errno) {
	off, errno := writeOffset(f.File)
	if errno != 0 {
		return 0, errno
	}
	if buf, errno = f.fit(buf, off); errno != 0 {
		return 0, errno
	}
	defer f.settle()
	return f.File.Write(buf)
}

func (f *budgetFile) Pwrite(buf []byte, off int64) (int, experimentalsys.Errno) {
	if f.IsAppend() { // at the end, whatever off says (sizedFile.Pwrite)
		var errno experimentalsys.Errno
		if off, errno = writeOffset(f.File); errno != 0 {
			return 0, errno
		}
	}
	buf, errno := f.fit(buf, off)
	if errno != 0 {
		return 0, errno
	}
	defer f.settle()
	return f.File.Pwrite(buf, off)
}

// fit cuts buf, to be written at off, to what the file size limit and
// then the budget let the file grow by, and reserves that. The size limit
// comes first, as the kernel checks RLIMIT_FSIZE before tmpfs looks for
// room: a write that meets both is EFBIG natively, not ENOSPC.
func (f *budgetFile) fit(buf []byte, off int64) ([]byte, experimentalsys.Errno) {
	if len(buf) == 0 {
		return buf, 0
	}
	if s, ok := f.File.(*sizedFile); ok {
		var errno experimentalsys.Errno
		if buf, errno = clip(buf, s.room(off), experimentalsys.ERANGE); errno != 0 {
			return nil, errno
		}
	}
	limit, ok := f.reserve(off + int64(len(buf)))
	if ok {
		return buf, 0
	}
	buf, errno := clip(buf, limit-off, experimentalsys.EIO)
	if errno != 0 {
		return nil, errno
	}
	if _, ok := f.reserve(off + int64(len(buf))); !ok {
		return nil, experimentalsys.EIO
	}
	return buf, 0
}

func (f *budgetFile) Truncate(size int64) experimentalsys.Errno {
	if s, ok := f.File.(*sizedFile); ok && size > s.max.Load() {
		return experimentalsys.ERANGE // the size limit first, as in fit
	}
	if _, ok := f.reserve(size); !ok {
		return experimentalsys.EIO
	}
	defer f.settle()
	return f.File.Truncate(size)
}

func (f *budgetFile) Close() experimentalsys.Errno {
	if !f.closed {
		f.closed = true
		f.settle()
		f.b.change(f.st, func(u *inodeUse) { u.open-- })
	}
	return f.File.Close()
}
