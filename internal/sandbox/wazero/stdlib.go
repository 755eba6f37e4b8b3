package wazero

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
)

// stdlibTree is the stdlib zip as the tree the guest sees at /usr/lib, laid
// out as natively: python3.11/<module>.py with its bytecode in
// python3.11/__pycache__/<module>.cpython-311.pyc (unchecked hash-based
// pycs, so an import reads the bytecode and only stats the source; the
// sources serve tracebacks, warnings and inspect), the data files beside
// the modules, and an empty
// python3.11/lib-dynload, whose absence CPython's getpath reports on
// stderr. A directory, not the zip itself: zipimport parses the
// whole zip directory in Python at every start, a quarter of an empty run;
// FileFinder lists only the directories an import touches.
//
// The entries are stored, not compressed (mkstdlib.py), so a file is a
// section of the zip, read when the guest reads it: a run imports a few
// dozen of its 600 modules, and a process no longer reads (and pages in)
// 12 MB to serve them. zip is the zip file Load opened and checked (its
// stamp vouches for that very file, stamp.go; the file stays open, so a
// build replaced by rename does not change under it), the bytes Load
// hashed when it had to, or, in a child, its mapping of its parent's
// open file (mapBuildFile). No entry's CRC is checked: the whole zip was
// checked.
type stdlibTree struct {
	files map[string]*zip.File
	// extra holds files beside the zip's, by path: the host's os-release
	// (osrelease.go).
	extra map[string][]byte
	// dirs lists each directory's names, sorted: ".", python3.11, the
	// empty lib-dynload, and every directory a file lies under.
	dirs map[string][]string
	zip  io.ReaderAt
	size int64
}

var _ fs.StatFS = (*stdlibTree)(nil)

// stdlibRoot is the directory the stdlib's files are under, in the tree.
const stdlibRoot = "python3.11"

// newStdlibTree reads the zip's central directory from zipped (size
// bytes), which must stay readable as long as the tree is used.
func newStdlibTree(zipped io.ReaderAt, size int64) (*stdlibTree, error) {
	zr, err := zip.NewReader(zipped, size)
	if err != nil {
		return nil, err
	}
	t := &stdlibTree{
		files: make(map[string]*zip.File, len(zr.File)),
		dirs:  map[string][]string{".": {stdlibRoot}, stdlibRoot: {"lib-dynload"}, stdlibRoot + "/lib-dynload": nil},
		zip:   zipped,
		size:  size,
	}
	for _, f := range zr.File {
		if f.FileInfo().IsDir() {
			continue
		}
		if !fs.ValidPath(f.Name) || !stdlibName(f.Name) {
			return nil, fmt.Errorf("unexpected entry %q", f.Name)
		}
		if f.Method != zip.Store || f.CompressedSize64 != f.UncompressedSize64 {
			return nil, fmt.Errorf("entry %q is compressed", f.Name)
		}
		name := stdlibRoot + "/" + f.Name
		if _, ok := t.files[name]; ok {
			return nil, fmt.Errorf("entry %q appears twice", f.Name)
		}
		t.files[name] = f
		t.addToDir(name)
	}
	for dir, names := range t.dirs {
		if _, ok := t.files[dir]; ok {
			return nil, fmt.Errorf("entry %q is a file and a directory", strings.TrimPrefix(dir, stdlibRoot+"/"))
		}
		slices.Sort(names)
	}
	return t, nil
}

// addFile adds a file of the given bytes at name, in the tree's root
// beside python3.11, unless something has that name; data nil adds
// nothing.
func (t *stdlibTree) addFile(name string, data []byte) {
	if data == nil || !fs.ValidPath(name) || name == "." || strings.Contains(name, "/") {
		return
	}
	if _, taken := t.dirs[name]; taken {
		return
	}
	if _, taken := t.extra[name]; taken {
		return
	}
	if t.extra == nil {
		t.extra = map[string][]byte{}
	}
	t.extra[name] = data
	t.dirs["."] = append(t.dirs["."], name)
	slices.Sort(t.dirs["."])
}

// addEmptyDir adds an empty directory at name (under the tree's root, as
// "python3/dist-packages"), and the directories above it, unless something
// has that name.
func (t *stdlibTree) addEmptyDir(name string) {
	if !fs.ValidPath(name) || name == "." {
		return
	}
	if _, taken := t.dirs[name]; taken {
		return
	}
	if _, taken := t.files[name]; taken {
		return
	}
	t.dirs[name] = nil
	t.addToDir(name)
	for dir := path.Dir(name); ; dir = path.Dir(dir) { // only the listings it added to
		slices.Sort(t.dirs[dir])
		if dir == "." {
			return
		}
	}
}

// addHostPackageDirs adds wazeroPackageDirs that lie under the mount.
func (t *stdlibTree) addHostPackageDirs() {
	for _, p := range wazeroPackageDirs {
		if rel, ok := strings.CutPrefix(p, stdlibMount+"/"); ok {
			t.addEmptyDir(rel)
		}
	}
}

// addToDir lists name in its directory, and each directory above it not
// yet listed in its own.
func (t *stdlibTree) addToDir(name string) {
	for {
		dir, base := path.Split(name)
		if dir = strings.TrimSuffix(dir, "/"); dir == "" {
			dir = "." // the root's listing
		}
		names, listed := t.dirs[dir]
		t.dirs[dir] = append(names, base)
		if listed {
			return
		}
		name = dir
	}
}

// stdlibName reports whether name is what mkstdlib.py writes: bytecode in
// a __pycache__, or any other file (a module's source, or data Debian
// installs beside the modules: lib2to3's grammars, pydoc's style sheet)
// except what the import system would load in place of a source, compiled
// bytecode beside it or an extension module.
func stdlibName(name string) bool {
	dir, file := path.Split(name)
	if path.Base(dir) == "__pycache__" {
		return strings.HasSuffix(file, ".cpython-311.pyc")
	}
	switch path.Ext(file) {
	case ".pyc", ".pyo", ".so", ".pyd":
		return false
	}
	return true
}

// Open implements fs.FS: a file reads its section of the zip; a directory
// lists its names.
func (t *stdlibTree) Open(name string) (fs.File, error) {
	if data, ok := t.extra[name]; ok {
		r := io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))
		return &stdlibEntry{SectionReader: r, info: stdlibInfo{name: path.Base(name), size: int64(len(data))}}, nil
	}
	f, ok := t.files[name]
	if !ok {
		if names, ok := t.dirs[name]; ok {
			return &stdlibDir{tree: t, path: name, names: names}, nil
		}
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
	}
	// Where the data starts is in the entry's local header: read for the
	// entries opened only (one read each, of 600).
	off, err := f.DataOffset()
	if err == nil && (off < 0 || off > t.size || f.UncompressedSize64 > uint64(t.size-off)) {
		err = errors.New("entry lies outside the zip")
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	size := int64(f.UncompressedSize64)
	return &stdlibEntry{SectionReader: io.NewSectionReader(t.zip, off, size), info: stdlibInfo{name: path.Base(name), size: size, mod: f.Modified}}, nil
}

// Stat implements fs.StatFS, with each file's size. A directory's stat
// is a map lookup: CPython's import system stats a directory on sys.path
// for every module it finds there.
func (t *stdlibTree) Stat(name string) (fs.FileInfo, error) {
	if f, ok := t.files[name]; ok {
		return stdlibInfo{name: path.Base(name), size: int64(f.UncompressedSize64), mod: f.Modified}, nil
	}
	if data, ok := t.extra[name]; ok {
		return stdlibInfo{name: path.Base(name), size: int64(len(data))}, nil
	}
	if _, ok := t.dirs[name]; ok {
		return stdlibDirInfo(path.Base(name)), nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// stdlibDir is an open directory of the tree: fs.ReadDirFile.
type stdlibDir struct {
	tree  *stdlibTree
	path  string
	names []string // what ReadDir has yet to return
}

func (d *stdlibDir) Stat() (fs.FileInfo, error) { return stdlibDirInfo(path.Base(d.path)), nil }
func (d *stdlibDir) Close() error               { return nil }
func (d *stdlibDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.path, Err: fs.ErrInvalid}
}

// ReadDir implements fs.ReadDirFile.
func (d *stdlibDir) ReadDir(n int) ([]fs.DirEntry, error) {
	count := len(d.names)
	if n > 0 && n < count {
		count = n
	}
	if n > 0 && count == 0 {
		return nil, io.EOF
	}
	entries := make([]fs.DirEntry, count)
	for i, name := range d.names[:count] {
		if d.path != "." {
			name = d.path + "/" + name
		}
		info, err := d.tree.Stat(name)
		if err != nil {
			return entries[:i], err
		}
		entries[i] = fs.FileInfoToDirEntry(info)
	}
	d.names = d.names[count:]
	return entries, nil
}

type stdlibEntry struct {
	*io.SectionReader
	info stdlibInfo
}

func (f *stdlibEntry) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *stdlibEntry) Close() error               { return nil }

// stdlibInfo is the FileInfo of a stdlib file (read-only) or directory.
// A file's time is its zip entry's: the date of the Debian revision the
// build's source is (python/wasi/mkstdlib.py), which the native guest's
// files carry from Debian's package. A directory, and a file beside the
// zip's, have none (the mount's time stands in: nativeView.undated).
type stdlibInfo struct {
	name string
	size int64
	dir  bool
	mod  time.Time
}

func (i stdlibInfo) Name() string { return i.name }
func (i stdlibInfo) Size() int64  { return i.size }
func (i stdlibInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i stdlibInfo) ModTime() time.Time { return i.mod }
func (i stdlibInfo) IsDir() bool        { return i.dir }
func (i stdlibInfo) Sys() any           { return nil }

// stdlibDirInfo is a stdlib directory's FileInfo, named by its base name.
func stdlibDirInfo(name string) stdlibInfo { return stdlibInfo{name: name, dir: true} }
