package wazero

import (
	"io/fs"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	wsys "github.com/tetratelabs/wazero/sys"
)

// WASI preview 1 has no permission bits and no owners: its filestat
// carries a file's type, device, inode, links, size and times, so the
// guest saw every file as mode 0, owned by uid 0 (os.stat, and whatever a
// script builds from it: a zip's or a tar's member modes, stat.filemode,
// shutil's copies). nativeView makes each mount answer what the native
// guest's kernel answers for the same path: the mount's own device
// number, the owner the native guest sees (the guest's uid 1000 for what
// it writes, nobody (65534) for the host's read-only files, root for the
// mount points the sandbox makes), and permission bits, the host's own on
// the writable mounts (created there as natively, under umask 022) and the
// native sandbox's elsewhere.
//
// The three travel in the filestat's device field, whose host value means
// nothing to the guest (viewDev), and the WASI build's fstat and fstatat
// (python/wasi/_apysup_stat.c) move them into st_mode, st_uid, st_gid and
// st_dev, the device the native guest would see. A device field without viewMagic (the guest's
// standard streams, which wazero serves itself) is left as it is.
type nativeView struct {
	experimentalsys.FS
	dev  uint16 // the mount's device
	at   string // where the guest sees the mount ("/etc"): its inode numbers' namespace
	view viewFunc
	// owned: the guest's own files live here (a writable mount), so opens
	// and changes are checked against their owner's bits. Elsewhere the
	// mount itself refuses every change and nothing the guest may open is
	// denied to it, so no check (and no host stat) is needed.
	owned bool
	// made is when the mount was made (Unix ns): the time of its files
	// that have none of their own (undated).
	made int64

	mu       sync.Mutex
	rootPerm fs.FileMode // the mount's own directory's bits once the guest changed them
	rootSet  bool
}

// viewFunc gives what the native guest sees of a mount's path, given the
// mount's own answer: the permission bits, the owner, and a device of the
// path's own, or 0 for the mount's.
type viewFunc func(path string, st wsys.Stat_t) (perm fs.FileMode, o owner, dev uint16)

// The devices of the native sandbox's mounts: its root, a read-only bind
// of the host's, holds the stdlib, the zoneinfo database, the guest's
// files and the job; the writable mounts and /dev are tmpfs of their own,
// and each device in /dev a bind mount of the host's node.
const (
	rootDev uint16 = 1 + iota
	outDev
	workDev
	tmpDev
	devDev
	firstDeviceDev // + the device's index in deviceNames
)

// procDev is /proc's (procfs.go), after the five devices'.
const procDev = firstDeviceDev + 5

// owner is who the native guest sees owning a file.
type owner uint16

const (
	ownerGuest  owner = 1 // uid and gid 1000, the guest's
	ownerNobody owner = 2 // 65534: the host's files, through the user namespace
	ownerRoot   owner = 3 // 0: the sandbox's own mount points (/tmp, /dev)
)

const viewMagic = 0xa9b5

// viewDev packs a mount's device number, an owner, permission bits
// (setuid, setgid and sticky included, as in st_mode) and, for a device of
// /dev, its minor number (deviceMinor: the four bits above the permission
// bits) into a filestat's device field. The WASI build's stat
// (python/wasi/_apysup_stat.c) makes st_rdev of the minor, and st_blksize
// and st_blocks as the native guest's filesystems answer them.
func viewDev(dev uint16, o owner, perm fs.FileMode) uint64 {
	bits := uint64(perm.Perm())
	if perm&fs.ModeSetuid != 0 {
		bits |= 0o4000
	}
	if perm&fs.ModeSetgid != 0 {
		bits |= 0o2000
	}
	if perm&fs.ModeSticky != 0 {
		bits |= 0o1000
	}
	return viewMagic<<48 | uint64(dev)<<32 | uint64(o)<<16 | uint64(deviceMinor(dev))<<12 | bits
}

// viewedBy undoes viewDev: the device, owner and bits a mount's view gave
// st, if one did.
func viewedBy(st wsys.Stat_t) (perm fs.FileMode, o owner, dev uint16, ok bool) {
	if st.Dev>>48 != viewMagic {
		return 0, 0, 0, false
	}
	bits := st.Dev & 0o7777
	perm = fs.FileMode(bits & 0o777)
	for _, b := range [...]struct {
		bit  uint64
		mode fs.FileMode
	}{{0o4000, fs.ModeSetuid}, {0o2000, fs.ModeSetgid}, {0o1000, fs.ModeSticky}} {
		if bits&b.bit != 0 {
			perm |= b.mode
		}
	}
	return perm, owner(st.Dev >> 16), uint16(st.Dev >> 32), true
}

// deviceMinor is the minor number of the host's device behind a device
// number of the view (firstDeviceDev onwards), 0 for any other: the
// devices of /dev are all the kernel's memory devices, major 1.
func deviceMinor(dev uint16) uint16 {
	if i := int(dev) - int(firstDeviceDev); dev >= firstDeviceDev && i < len(deviceMinors) {
		return deviceMinors[i]
	}
	return 0
}

// bits is what the view gives path, whose mount's answer is st, with the
// bits the guest gave the mount's own directory.
func (v *nativeView) bits(path string, st wsys.Stat_t) (fs.FileMode, owner, uint16) {
	if perm, o, dev, ok := viewedBy(st); ok {
		// Another mount's answer, where a link led (linkdir.go): its view.
		return perm, o, dev
	}
	perm, o, dev := v.view(path, st)
	if dev == 0 {
		dev = v.dev
	}
	if isRoot(path) {
		v.mu.Lock()
		if v.rootSet {
			perm = v.rootPerm
		}
		v.mu.Unlock()
	}
	return perm, o, dev
}

func (v *nativeView) seen(path string, st wsys.Stat_t, errno experimentalsys.Errno) (wsys.Stat_t, experimentalsys.Errno) {
	if errno != 0 {
		return st, errno
	}
	perm, o, dev := v.bits(path, st)
	st.Dev = viewDev(dev, o, perm)
	if st.Ino == 0 {
		st.Ino = syntheticIno(dev, v.at, path)
	}
	for _, t := range [...]*int64{&st.Atim, &st.Mtim, &st.Ctim} {
		if *t == undated {
			*t = v.made
		}
	}
	return st, 0
}

// undated is the time wazero gives a file whose fs.FileInfo has none
// (ModTime's zero time.Time): its UnixNano overflows, to a day in 2339.
// The in-memory mounts (the generated /etc, the job, the guest's root,
// /dev, the stdlib's directories) gave every file that date: a script's
// own mtime lay in the future, and zipfile refused to store the script or
// a copy of it (a zip's date ends in 2107). Natively these files are
// dated when the sandbox makes them, or by the host's package; here the
// mount's time stands in (nativeView.made).
var undated = time.Time{}.UnixNano()

// nameTooLong is ENAMETOOLONG for a path the native guest's kernel refuses
// by its length alone, on any mount, before the mount resolves anything:
// a whole path from the guest's root (the mount's place, then path) that
// does not fit PATH_MAX with its NUL (a path of any length reached the
// writable mounts' resolver, which split it into its names first: 100 MB
// cost the wazero child 4 GB), or, where the files are not the host's
// own, a name over NAME_MAX bytes (which tmpfs's and ext4's lookups
// refuse, and the host's files of a writable mount refuse themselves; the
// in-memory and read-only mounts answered ENOENT, or EROFS to a create).
// /proc's lookup takes a name of any length: ENOENT. Every call that
// takes a path asks this first.
func (v *nativeView) nameTooLong(paths ...string) experimentalsys.Errno {
	for _, path := range paths {
		full := len(v.at) + 1 + len(path) // "/etc" + "/" + "passwd"
		if v.at == "/" {
			full--
		}
		if full >= pathMax || (!v.owned && v.dev != procDev && hasLongName(path)) {
			return experimentalsys.ENAMETOOLONG
		}
	}
	return 0
}

// hasLongName reports whether a name of path is longer than NAME_MAX.
func hasLongName(path string) bool {
	n := 0
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			n = 0
		} else if n++; n > nameMax {
			return true
		}
	}
	return false
}

// pathMax is Linux's PATH_MAX: the longest path, its NUL included.
const pathMax = 4096

// syntheticIno is an inode number for a file of a tree that has none (the
// stdlib zip, embedded files, the guest's root: wazero answers 0 for
// every one of them), so that two of them are not the same file to
// os.path.samestat, nor a mount point's directory its parent's to
// os.path.ismount. It is a hash of the device, the mount's place in the
// guest (mounts share the root's device) and the clean path in the
// mount, never 0.
func syntheticIno(dev uint16, at, name string) wsys.Inode {
	if isRoot(name) {
		name = "."
	}
	// FNV-1a, inline: a stdlib import stats several paths, and
	// hash/fnv's hasher and the []byte of name would be allocations.
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for _, b := range [2]byte{byte(dev), byte(dev >> 8)} {
		h = (h ^ uint64(b)) * prime
	}
	for i := 0; i < len(at); i++ {
		h = (h ^ uint64(at[i])) * prime
	}
	h = (h ^ 0) * prime // at and name apart
	for i := 0; i < len(name); i++ {
		h = (h ^ uint64(name[i])) * prime
	}
	return wsys.Inode(h | 1)
}

// dirOnly is path without the ending that makes Linux resolve it to a
// directory only ("x/", "x/."), and which ending it had ("/", "/.", or ""
// for none). The mount's own directory is a directory either way.
func dirOnly(p string) (string, string) {
	switch {
	case p == "." || p == "" || p == "/":
		return p, ""
	case strings.HasSuffix(p, "/."):
		return strings.TrimRight(strings.TrimSuffix(p, "/."), "/"), "/."
	case strings.HasSuffix(p, "/"):
		return strings.TrimRight(p, "/"), "/"
	}
	return p, ""
}

// missing answers why path did not resolve when its mount said ENOENT:
// ENOTDIR when a name on the way is something other than a directory, as
// Linux resolves a path. The writable mounts' host files say so
// themselves; the others did not, so "file/x", which the WASI build asks
// for "file/.", was ENOENT there. Only on their error path: a missing
// name is common (every import looks for several), and a host stat of
// each name on its way would be paid by every one on the writable mounts.
func (v *nativeView) missing(path string, errno experimentalsys.Errno) experimentalsys.Errno {
	if errno != experimentalsys.ENOENT || v.owned {
		return errno
	}
	for i := 0; i < len(path); i++ {
		if path[i] != '/' || i == 0 {
			continue
		}
		if st, e := v.FS.Stat(path[:i]); e == 0 && !st.Mode.IsDir() {
			return experimentalsys.ENOTDIR
		} else if e != 0 {
			return errno
		}
	}
	return errno
}

// Readlink answers as Stat does of a path that does not resolve: ENOTDIR
// for a file on the way ("/etc/passwd/x"), ENAMETOOLONG by its length.
func (v *nativeView) Readlink(path string) (string, experimentalsys.Errno) {
	if errno := v.nameTooLong(path); errno != 0 {
		return "", errno
	}
	target, errno := v.FS.Readlink(path)
	return target, v.missing(path, errno)
}

// dirStat answers stat of a path that must name a directory ("x/", which
// Linux follows even for lstat): ENOTDIR when it names something else.
func (v *nativeView) dirStat(path string) (wsys.Stat_t, experimentalsys.Errno) {
	st, errno := v.FS.Stat(path)
	if errno == 0 && !st.Mode.IsDir() {
		return st, experimentalsys.ENOTDIR
	}
	return v.seen(path, st, v.missing(path, errno))
}

// Stat and Lstat answer a path ending in "/" or "/." as Linux does: only
// a directory, followed (ENOTDIR for anything else). The writable mounts'
// host files did; the in-memory and read-only mounts ignored the ending.
func (v *nativeView) Stat(path string) (wsys.Stat_t, experimentalsys.Errno) {
	if errno := v.nameTooLong(path); errno != 0 {
		return wsys.Stat_t{}, errno
	}
	if p, ending := dirOnly(path); ending != "" {
		return v.dirStat(p)
	}
	st, errno := v.FS.Stat(path)
	return v.seen(path, st, v.missing(path, errno))
}

func (v *nativeView) Lstat(path string) (wsys.Stat_t, experimentalsys.Errno) {
	if errno := v.nameTooLong(path); errno != 0 {
		return wsys.Stat_t{}, errno
	}
	if p, ending := dirOnly(path); ending != "" {
		return v.dirStat(p)
	}
	st, errno := v.FS.Lstat(path)
	return v.seen(path, st, v.missing(path, errno))
}

// Chmod changes bits as the native guest may (chmod.go): a file the guest
// owns on a writable mount has its host file's bits changed (the nine
// permission bits only); the mount's own directory, when the guest owns
// it (/workspace, /run/apysup/out), keeps its new bits in the view, since
// the host directory's are not the guest's to see; root's (/tmp, /dev)
// are EPERM; the rest is the mount's answer (EROFS, or EPERM for a
// device).
func (v *nativeView) Chmod(path string, perm fs.FileMode) experimentalsys.Errno {
	if errno := v.nameTooLong(path); errno != 0 {
		return errno
	}
	st, errno := v.FS.Stat(path)
	if errno != 0 {
		return errno
	}
	_, o, _ := v.bits(path, st)
	switch {
	case o == ownerRoot:
		return experimentalsys.EPERM
	case isRoot(path) && o == ownerGuest:
		v.mu.Lock()
		v.rootPerm, v.rootSet = perm&fs.ModePerm, true
		v.mu.Unlock()
		return 0
	}
	return v.FS.Chmod(path, perm&fs.ModePerm)
}

// OpenFile refuses, as the kernel does (EACCES), to open a file of the
// guest's for an access its owner's bits deny: the host, which opens it,
// would not (a guest that chmods a file 0o200 cannot read it back
// natively). An exclusive create answers EEXIST first, as natively.
func (v *nativeView) OpenFile(path string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	if errno := v.nameTooLong(path); errno != 0 {
		return nil, errno
	}
	if p, ending := dirOnly(path); ending != "" {
		// Linux: "x/" with O_CREAT is EISDIR whatever x is; otherwise x
		// must be a directory (ENOTDIR), opened for reading (EISDIR), as
		// "x/." must, with O_CREAT too.
		if ending == "/" && flag&experimentalsys.O_CREAT != 0 {
			return nil, experimentalsys.EISDIR
		}
		if _, errno := v.dirStat(p); errno != 0 {
			return nil, errno
		}
		if flag&(experimentalsys.O_CREAT|experimentalsys.O_WRONLY|experimentalsys.O_RDWR|experimentalsys.O_TRUNC) != 0 {
			return nil, experimentalsys.EISDIR
		}
		path = p
	}
	if flag&experimentalsys.O_CREAT != 0 && (isRoot(path) || !v.owned) {
		// O_CREAT on a directory is EISDIR (open(2)); the host's files of
		// a writable mount say so themselves, the others did not.
		if st, errno := v.FS.Stat(path); errno == 0 && st.Mode.IsDir() && flag&experimentalsys.O_EXCL == 0 {
			return nil, experimentalsys.EISDIR
		}
	}
	if v.owned && !isRoot(path) {
		st, errno := v.FS.Stat(path)
		switch {
		case errno == 0 && flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) != experimentalsys.O_CREAT|experimentalsys.O_EXCL:
			if bits, o, _ := v.bits(path, st); o == ownerGuest && !ownerMay(bits, flag) {
				return nil, experimentalsys.EACCES
			}
		case errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0:
			if errno := v.changes(path); errno != 0 {
				return nil, errno
			}
		}
	}
	f, errno := v.FS.OpenFile(path, flag, perm)
	if errno != 0 {
		return nil, v.missing(path, errno)
	}
	return &viewedFile{File: f, v: v, path: path}, 0
}

// changes answers EACCES for a change to the directory that holds name
// (a name made, removed or renamed there) when the guest owns that
// directory and its bits deny the guest writing or searching it, as the
// kernel does natively; the mount answers the rest (EROFS first, as
// natively, on a read-only one).
func (v *nativeView) changes(name string) experimentalsys.Errno {
	if !v.owned {
		return 0
	}
	dir := path.Dir(name)
	st := wsys.Stat_t{Mode: fs.ModeDir} // the mount's own directory: its view needs no host stat
	if !isRoot(dir) {
		var errno experimentalsys.Errno
		if st, errno = v.FS.Stat(dir); errno != 0 {
			return 0 // the operation itself answers
		}
	}
	if !st.Mode.IsDir() {
		return 0 // not a directory: the operation answers ENOTDIR
	}
	if perm, o, _ := v.bits(dir, st); o == ownerGuest && perm&0o300 != 0o300 {
		return experimentalsys.EACCES
	}
	return 0
}

func (v *nativeView) Mkdir(name string, perm fs.FileMode) experimentalsys.Errno {
	if errno := v.nameTooLong(name); errno != 0 {
		return errno
	}
	if errno := v.changes(name); errno != 0 {
		return errno
	}
	return v.FS.Mkdir(name, perm)
}

func (v *nativeView) Rmdir(name string) experimentalsys.Errno {
	if errno := v.nameTooLong(name); errno != 0 {
		return errno
	}
	if errno := v.changes(name); errno != 0 {
		return errno
	}
	return v.FS.Rmdir(name)
}

// Unlink of a mount's own directory is EROFS: its name lies on the
// native guest's read-only root (the host said EISDIR).
func (v *nativeView) Unlink(name string) experimentalsys.Errno {
	if errno := v.nameTooLong(name); errno != 0 {
		return errno
	}
	if isRoot(name) {
		return experimentalsys.EROFS
	}
	if errno := v.changes(name); errno != 0 {
		return errno
	}
	return v.FS.Unlink(name)
}

// Rename of a writable mount's own directory, or onto it, is EXDEV, as
// natively: the mount point is a name of the mount below (the root), so
// the two names lie on two mounts (the host's rename said EIO). ENOSYS
// here, two mounts' answer, which the WASI build makes EXDEV (linkDir).
func (v *nativeView) Rename(from, to string) experimentalsys.Errno {
	if errno := v.nameTooLong(from, to); errno != 0 {
		return errno
	}
	if v.owned && isRoot(from) != isRoot(to) {
		return experimentalsys.ENOSYS
	}
	if errno := v.changes(from); errno != 0 {
		return errno
	}
	if errno := v.changes(to); errno != 0 {
		return errno
	}
	return v.FS.Rename(from, to)
}

func (v *nativeView) Link(oldName, newName string) experimentalsys.Errno {
	if errno := v.nameTooLong(oldName, newName); errno != 0 {
		return errno
	}
	if errno := v.changes(newName); errno != 0 {
		return errno
	}
	return v.FS.Link(oldName, newName)
}

// Utimens is the mount's, once the path's length passes.
func (v *nativeView) Utimens(path string, atim, mtim int64) experimentalsys.Errno {
	if errno := v.nameTooLong(path); errno != 0 {
		return errno
	}
	return v.FS.Utimens(path, atim, mtim)
}

// Lutimens passes utime without following a link on (lutimens).
func (v *nativeView) Lutimens(path string, atim, mtim int64) experimentalsys.Errno {
	if errno := v.nameTooLong(path); errno != 0 {
		return errno
	}
	return lutimens(v.FS, path, atim, mtim)
}

func (v *nativeView) Symlink(oldName, linkName string) experimentalsys.Errno {
	if errno := v.nameTooLong(linkName); errno != 0 {
		return errno
	}
	if errno := v.changes(linkName); errno != 0 {
		return errno
	}
	return v.FS.Symlink(oldName, linkName)
}

// ownerMay reports whether the owner's bits of perm allow an open with
// flag: reading for O_RDONLY and O_RDWR, writing for O_WRONLY, O_RDWR and
// O_TRUNC.
func ownerMay(perm fs.FileMode, flag experimentalsys.Oflag) bool {
	access := flag & (experimentalsys.O_RDONLY | experimentalsys.O_WRONLY | experimentalsys.O_RDWR)
	read := access == experimentalsys.O_RDONLY || access == experimentalsys.O_RDWR
	write := access == experimentalsys.O_WRONLY || access == experimentalsys.O_RDWR || flag&experimentalsys.O_TRUNC != 0
	return (!read || perm&0o400 != 0) && (!write || perm&0o200 != 0)
}

// viewedFile answers fstat as its mount answers stat of its path.
type viewedFile struct {
	experimentalsys.File
	v    *nativeView
	path string
}

func (f *viewedFile) Stat() (wsys.Stat_t, experimentalsys.Errno) {
	st, errno := f.File.Stat()
	return f.v.seen(f.path, st, errno)
}

// Readdir gives each entry the inode number lstat gives its path, as a
// Linux directory entry's d_ino is (os.DirEntry.inode()): a tree with no
// inode numbers of its own answered 0 for every entry, where its lstat
// answers syntheticIno of the entry's device, which the view gives from
// the path and the entry's type alone. No stat: the interpreter's start
// lists the stdlib's directories, hundreds of entries.
func (f *viewedFile) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	dirents, errno := f.File.Readdir(n)
	for i := range dirents {
		if dirents[i].Ino != 0 {
			continue
		}
		child := path.Join(f.path, dirents[i].Name)
		_, _, dev := f.v.bits(child, wsys.Stat_t{Mode: dirents[i].Type})
		dirents[i].Ino = syntheticIno(dev, f.v.at, child)
	}
	return dirents, errno
}

// The views of the mounts, each as the native sandbox makes it
// (TestStatAsNative compares them with a native run's).

// isRoot reports whether path names the mount's own directory.
func isRoot(path string) bool { return path == "." || path == "" }

// hostFiles is a read-only mount of host files: nobody's, with the host's
// bits (the zoneinfo database).
func hostFiles(_ string, st wsys.Stat_t) (fs.FileMode, owner, uint16) { return st.Mode, ownerNobody, 0 }

// installedView is a read-only mount of files the host installs, whose bits
// the guest's tree does not keep (the stdlib zip, embedded files): 0755
// for a directory, file for a file.
func installedView(file fs.FileMode) viewFunc {
	return func(_ string, st wsys.Stat_t) (fs.FileMode, owner, uint16) {
		if st.Mode.IsDir() {
			return 0o755, ownerNobody, 0
		}
		return file, ownerNobody, 0
	}
}

// written is a writable mount: the guest's files with the host's bits
// (created as natively, guestFileMode and guestDirMode), and the mount's
// own directory as the native sandbox mounts it.
func written(rootPerm fs.FileMode, rootOwner owner) viewFunc {
	return func(path string, st wsys.Stat_t) (fs.FileMode, owner, uint16) {
		if isRoot(path) {
			return rootPerm, rootOwner, 0
		}
		return st.Mode, ownerGuest, 0
	}
}

// devicesView is /dev: root's directory of devices anyone may read and
// write, each bound from the host's, and root's links to the standard
// streams.
func devicesView(path string, st wsys.Stat_t) (fs.FileMode, owner, uint16) {
	switch {
	case isRoot(path):
		return 0o755, ownerRoot, 0
	case st.Mode&fs.ModeSymlink != 0: // stdin, stdout, stderr: root's links
		return 0o777, ownerRoot, 0
	case st.Mode&fs.ModeNamedPipe != 0: // through them, the guest's own pipes
		return 0o600, ownerGuest, 0
	case stream(path) == 0: // stdin, followed: /dev/null
		path = "null"
	}
	for i, name := range deviceNames {
		if path == name {
			return 0o666, ownerNobody, firstDeviceDev + uint16(i)
		}
	}
	return 0o666, ownerNobody, 0
}

// rootView is the guest's "/": the directories that lead to the mounts
// and the interpreter's path, as the host has them, except the run's own
// directory, which the native sandbox makes the guest's.
func rootView(name string, _ wsys.Stat_t) (fs.FileMode, owner, uint16) {
	if name == runDir {
		return 0o705, ownerGuest, 0
	}
	return 0o755, ownerNobody, 0
}

// runDir is the run's directory, the parent of its job, out and call
// socket directories, relative to "/".
var runDir = strings.TrimPrefix(path.Dir(sandbox.GuestJobDir), "/")
