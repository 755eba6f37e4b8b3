package wazero

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	wsys "github.com/tetratelabs/wazero/sys"
)

// The device field carries the magic, the device, the owner and the bits
// where _apysup_stat.c reads them.
func TestViewDev(t *testing.T) {
	for _, c := range []struct {
		dev  uint16
		o    owner
		perm fs.FileMode
		want uint64
	}{
		{rootDev, ownerNobody, 0o644, 0xa9b5_0001_0002_01a4},
		{tmpDev, ownerRoot, 0o777 | fs.ModeSticky, 0xa9b5_0004_0003_03ff},
		{workDev, ownerGuest, fs.ModeDir | 0o755 | fs.ModeSetuid | fs.ModeSetgid, 0xa9b5_0003_0001_0ded},
		// /dev/null (1, 3) and /dev/urandom (1, 9): their minors above
		// the bits.
		{firstDeviceDev + 1, ownerNobody, 0o666, 0xa9b5_0007_0002_31b6},
		{firstDeviceDev + 3, ownerNobody, 0o666, 0xa9b5_0009_0002_91b6},
		{devDev, ownerRoot, 0o755, 0xa9b5_0005_0003_01ed},
	} {
		if got := viewDev(c.dev, c.o, c.perm); got != c.want {
			t.Errorf("viewDev(%d, %d, %v) = %#x, want %#x", c.dev, c.o, c.perm, got, c.want)
		}
	}
}

// A writable mount answers stat, lstat and fstat with its own directory
// as the native sandbox mounts it and the host's bits for the rest, the
// guest's; a device gets a device of its own.
func TestNativeView(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "f"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("f", filepath.Join(dir, "l")); err != nil {
		t.Fatal(err)
	}
	v := &nativeView{FS: sysfs.DirFS(dir), dev: tmpDev, view: written(0o777|fs.ModeSticky, ownerRoot), owned: true}
	check := func(what string, dev uint64, errno experimentalsys.Errno, want uint64) {
		t.Helper()
		if errno != 0 || dev != want {
			t.Errorf("%s: %#x %v, want %#x", what, dev, errno, want)
		}
	}
	st, errno := v.Stat(".")
	check("stat .", st.Dev, errno, viewDev(tmpDev, ownerRoot, 0o777|fs.ModeSticky))
	st, errno = v.Stat("f")
	check("stat f", st.Dev, errno, viewDev(tmpDev, ownerGuest, 0o600))
	st, errno = v.Lstat("l")
	check("lstat l", st.Dev, errno, viewDev(tmpDev, ownerGuest, 0o777))
	if st.Mode&fs.ModeSymlink == 0 {
		t.Errorf("lstat l: mode %v", st.Mode)
	}
	f, errno := v.OpenFile("f", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	st, errno = f.Stat()
	check("fstat f", st.Dev, errno, viewDev(tmpDev, ownerGuest, 0o600))
	if _, errno := v.Stat("missing"); errno != experimentalsys.ENOENT {
		t.Errorf("missing: %v", errno)
	}

	d := &nativeView{FS: newDevices(io.Discard, io.Discard), dev: devDev, view: devicesView}
	st, errno = d.Stat("null")
	check("null", st.Dev, errno, viewDev(firstDeviceDev+1, ownerNobody, 0o666))
	st, errno = d.Stat(".")
	check("/dev", st.Dev, errno, viewDev(devDev, ownerRoot, 0o755))
	r := &nativeView{FS: newReadOnly(&sysfs.AdaptFS{FS: guestRoot([]string{"/run/apysup/job"})}), dev: rootDev, view: rootView}
	st, errno = r.Stat("run/apysup")
	check("/run/apysup", st.Dev, errno, viewDev(rootDev, ownerGuest, 0o705))
	st, errno = r.Stat("run")
	check("/run", st.Dev, errno, viewDev(rootDev, ownerNobody, 0o755))

	// A tree without inodes gets one per path, the same each time.
	inos := map[wsys.Inode]string{}
	for _, name := range []string{".", "run", "run/apysup", "run/apysup/job", "run"} {
		st, errno := r.Stat(name)
		if errno != 0 || st.Ino == 0 || (inos[st.Ino] != "" && inos[st.Ino] != name) {
			t.Errorf("%s: inode %d %v (also %q's)", name, st.Ino, errno, inos[st.Ino])
		}
		inos[st.Ino] = name
	}
	if syntheticIno(rootDev, "/", "") != syntheticIno(rootDev, "/", ".") || syntheticIno(rootDev, "/", "x") == syntheticIno(outDev, "/", "x") ||
		syntheticIno(rootDev, "/", ".") == syntheticIno(rootDev, "/etc", ".") {
		t.Error("syntheticIno: the root's two names differ, or two devices' files agree")
	}
}

// The guest's own files open only for what their owner's bits allow, as
// the kernel checks them for the native guest.
func TestNativeViewOpensAsOwner(t *testing.T) {
	dir := t.TempDir()
	for name, mode := range map[string]fs.FileMode{"wo": 0o200, "ro": 0o400, "none": 0} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(filepath.Join(dir, name), mode); err != nil {
			t.Fatal(err)
		}
	}
	v := &nativeView{FS: newConfinedDir(dir, 1<<20), dev: workDev, view: written(0o755, ownerGuest), owned: true}
	for _, c := range []struct {
		name string
		flag experimentalsys.Oflag
		want experimentalsys.Errno
	}{
		{"wo", experimentalsys.O_RDONLY, experimentalsys.EACCES},
		{"wo", experimentalsys.O_WRONLY, 0},
		{"wo", experimentalsys.O_RDWR, experimentalsys.EACCES},
		{"ro", experimentalsys.O_RDONLY, 0},
		{"ro", experimentalsys.O_RDONLY | experimentalsys.O_TRUNC, experimentalsys.EACCES},
		{"ro", experimentalsys.O_WRONLY | experimentalsys.O_APPEND, experimentalsys.EACCES},
		{"none", experimentalsys.O_RDONLY, experimentalsys.EACCES},
		{"none", experimentalsys.O_WRONLY | experimentalsys.O_CREAT | experimentalsys.O_EXCL, experimentalsys.EEXIST},
		{"new", experimentalsys.O_WRONLY | experimentalsys.O_CREAT, 0},
		{".", experimentalsys.O_RDONLY, 0},
	} {
		f, errno := v.OpenFile(c.name, c.flag, 0)
		if errno != c.want {
			t.Errorf("open %s %#x: %v, want %v", c.name, c.flag, errno, c.want)
		}
		if f != nil {
			f.Close()
		}
	}
	// A mount that is not the guest's (read-only, its own refusals) is
	// not checked: no host stat on the path of every import.
	unowned := &nativeView{FS: newConfinedDir(dir, 1<<20), dev: rootDev, view: hostFiles}
	f, errno := unowned.OpenFile("wo", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Errorf("open wo on an unowned mount: %v", errno)
	} else {
		f.Close()
	}
}

// A directory of the guest's whose bits deny it writing or searching is
// not changed: no name made, removed or renamed in it (EACCES), as
// natively; the mount's own directory answers with the bits the guest gave
// it.
func TestNativeViewChangesAsOwner(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "d"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "d", "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "d"), 0o500); err != nil {
		t.Fatal(err)
	}
	v := &nativeView{FS: newConfinedDir(dir, 1<<20), dev: workDev, view: written(0o755, ownerGuest), owned: true}
	check := func(what string, got, want experimentalsys.Errno) {
		t.Helper()
		if got != want {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	_, errno := v.OpenFile("d/new", experimentalsys.O_WRONLY|experimentalsys.O_CREAT, 0)
	check("create in d", errno, experimentalsys.EACCES)
	f, errno := v.OpenFile("d/f", experimentalsys.O_RDONLY|experimentalsys.O_CREAT, 0)
	check("open existing in d", errno, 0)
	if f != nil {
		f.Close()
	}
	check("mkdir in d", v.Mkdir("d/sub", 0o755), experimentalsys.EACCES)
	check("unlink in d", v.Unlink("d/f"), experimentalsys.EACCES)
	check("rename out of d", v.Rename("d/f", "f"), experimentalsys.EACCES)
	check("mkdir under a file", v.Mkdir("d/f/x", 0o755), experimentalsys.ENOTDIR)
	_, errno = v.OpenFile("d/f/x", experimentalsys.O_WRONLY|experimentalsys.O_CREAT, 0)
	check("create under a file", errno, experimentalsys.ENOTDIR)
	check("mkdir at the top", v.Mkdir("top", 0o755), 0)
	check("chmod the mount", v.Chmod(".", 0o500), 0)
	check("mkdir at the top now", v.Mkdir("top2", 0o755), experimentalsys.EACCES)
	check("chmod the mount back", v.Chmod(".", 0o755), 0)
	check("rmdir at the top", v.Rmdir("top"), 0)
}

// dirOnly parses every path a guest gives a mount: what it keeps is the
// path less a directory-only ending, and the ending is one of three.
func FuzzDirOnly(f *testing.F) {
	for _, s := range []string{"", ".", "/", "x", "x/", "x//", "x/.", "x/./", "a/b/.", "./", "x/..", "//."} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		kept, ending := dirOnly(p)
		switch ending {
		case "":
			if kept != p {
				t.Fatalf("%q: no ending, but %q kept", p, kept)
			}
		case "/", "/.":
			if !strings.HasPrefix(p, kept) || strings.HasSuffix(kept, "/") || !strings.HasSuffix(p, ending) {
				t.Fatalf("%q: kept %q with ending %q", p, kept, ending)
			}
			if strings.Trim(p[len(kept):], "/.") != "" {
				t.Fatalf("%q: %q dropped more than the ending", p, p[len(kept):])
			}
		default:
			t.Fatalf("%q: ending %q", p, ending)
		}
	})
}

// A name on the way that is no directory is ENOTDIR on a mount whose
// files do not say so themselves; a writable mount's host files do, and
// are not asked again.
func TestNativeViewNameOnTheWay(t *testing.T) {
	files := fstest.MapFS{"f": {Data: []byte("x")}, "d/g": {Data: []byte("y")}}
	v := &nativeView{FS: newReadOnly(&sysfs.AdaptFS{FS: files}), dev: rootDev, at: "/etc", view: installedView(0o644)}
	for path, want := range map[string]experimentalsys.Errno{
		"f/x": experimentalsys.ENOTDIR, "d/g/x/y": experimentalsys.ENOTDIR, "d/x": experimentalsys.ENOENT,
		"m/x": experimentalsys.ENOENT, "f/": experimentalsys.ENOTDIR, "f/.": experimentalsys.ENOTDIR,
	} {
		if _, errno := v.Stat(path); errno != want {
			t.Errorf("stat %q: %v, want %v", path, errno, want)
		}
		if _, errno := v.OpenFile(path, experimentalsys.O_RDONLY, 0); errno != want {
			t.Errorf("open %q: %v, want %v", path, errno, want)
		}
	}
	if _, errno := v.OpenFile("d", experimentalsys.O_RDONLY|experimentalsys.O_CREAT, 0o644); errno != experimentalsys.EISDIR {
		t.Errorf("O_CREAT on a directory: %v, want EISDIR", errno)
	}
	owned := &nativeView{FS: newReadOnly(&sysfs.AdaptFS{FS: files}), dev: workDev, owned: true, view: written(0o755, ownerGuest)}
	if _, errno := owned.Stat("f/x"); errno != experimentalsys.ENOENT {
		t.Errorf("an owned mount's answer was changed: %v", errno)
	}
}

// A read-only mount served from memory answers as the native guest's
// kernel does besides reads: its files are dated (the mount's time stands
// in for none), readlink is EINVAL or the lookup's errno, fsync is done,
// names too long are ENAMETOOLONG, an exclusive create is EEXIST and
// O_TRUNC of a directory EISDIR.
func TestReadOnlyMountAnswers(t *testing.T) {
	files := fstest.MapFS{"f": {Data: []byte("x")}, "d/g": {Data: []byte("y")}}
	made := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC).UnixNano()
	v := &nativeView{FS: newReadOnly(&sysfs.AdaptFS{FS: files}), dev: rootDev, at: "/etc", view: installedView(0o644), made: made}
	for _, p := range []string{"f", "d", "d/g", "."} {
		st, errno := v.Stat(p)
		if errno != 0 || st.Mtim != made || st.Atim != made || st.Ctim != made {
			t.Errorf("stat %q: times %d %d %d %v, want %d", p, st.Atim, st.Mtim, st.Ctim, errno, made)
		}
	}
	for p, want := range map[string]experimentalsys.Errno{
		"f": experimentalsys.EINVAL, "d": experimentalsys.EINVAL, "m": experimentalsys.ENOENT,
		"f/x": experimentalsys.ENOTDIR, strings.Repeat("n", 256): experimentalsys.ENAMETOOLONG,
	} {
		if _, errno := v.Readlink(p); errno != want {
			t.Errorf("readlink %q: %v, want %v", p, errno, want)
		}
	}
	long := strings.Repeat("n", 256)
	deep := strings.Repeat("d/", 2050)
	for _, p := range []string{long, "d/" + long, long + "/x", deep} {
		if _, errno := v.Stat(p); errno != experimentalsys.ENAMETOOLONG {
			t.Errorf("stat of a name too long: %v", errno)
		}
		if _, errno := v.OpenFile(p, experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o644); errno != experimentalsys.ENAMETOOLONG {
			t.Errorf("create of a name too long: %v", errno)
		}
	}
	if _, errno := v.Stat(strings.Repeat("n", 255)); errno != experimentalsys.ENOENT {
		t.Errorf("a name of 255: %v, want ENOENT", errno)
	}
	for _, p := range []string{"f", "d"} {
		if _, errno := v.OpenFile(p, experimentalsys.O_CREAT|experimentalsys.O_EXCL|experimentalsys.O_WRONLY, 0o644); errno != experimentalsys.EEXIST {
			t.Errorf("exclusive create of %q: %v, want EEXIST", p, errno)
		}
	}
	if _, errno := v.OpenFile("d", experimentalsys.O_RDONLY|experimentalsys.O_TRUNC, 0); errno != experimentalsys.EISDIR {
		t.Errorf("O_TRUNC of a directory: %v, want EISDIR", errno)
	}
	for name, errno := range map[string]experimentalsys.Errno{
		"symlink onto a name there": v.Symlink("x", "f"), "link onto a name there": v.Link("f", "d"),
		"symlink": v.Symlink("x", "new"), "unlink of the mount's own directory": v.Unlink("."),
	} {
		want := experimentalsys.EEXIST
		if name == "symlink" || name == "unlink of the mount's own directory" {
			want = experimentalsys.EROFS
		}
		if errno != want {
			t.Errorf("%s: %v, want %v", name, errno, want)
		}
	}
	d := &nativeView{FS: newDevices(io.Discard, io.Discard), dev: devDev, view: devicesView}
	for name, got := range map[string][2]experimentalsys.Errno{
		"mkdir /dev":        {d.Mkdir(".", 0o755), experimentalsys.EEXIST},
		"rmdir /dev":        {d.Rmdir("."), experimentalsys.EROFS},
		"unlink /dev":       {d.Unlink("."), experimentalsys.EROFS},
		"symlink onto /dev": {d.Symlink("x", "."), experimentalsys.EEXIST},
		"mkdir /dev/null/x": {d.Mkdir("null/x", 0o755), experimentalsys.ENOTDIR},
		"rmdir /dev/null":   {d.Rmdir("null"), experimentalsys.EACCES},
	} {
		if got[0] != got[1] {
			t.Errorf("%s: %v, want %v", name, got[0], got[1])
		}
	}
	if _, errno := d.OpenFile(".", experimentalsys.O_WRONLY|experimentalsys.O_CREAT|experimentalsys.O_EXCL, 0o644); errno != experimentalsys.EEXIST {
		t.Errorf("exclusive create of /dev: %v, want EEXIST", errno)
	}
	if _, errno := d.OpenFile(".", experimentalsys.O_RDONLY|experimentalsys.O_TRUNC, 0); errno != experimentalsys.EISDIR {
		t.Errorf("O_TRUNC of /dev: %v, want EISDIR", errno)
	}
	for _, p := range []string{"f", "d"} {
		f, errno := v.OpenFile(p, experimentalsys.O_RDONLY, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		if errno := f.Sync(); errno != 0 {
			t.Errorf("fsync of %q: %v", p, errno)
		}
		if errno := f.Datasync(); errno != 0 {
			t.Errorf("fdatasync of %q: %v", p, errno)
		}
		f.Close()
	}
}

// TestViewedByUndoesViewDev: a stat another mount's view made (where a link
// led) reads back as that view's device, owner and bits, set-id and
// sticky bits included, and a stat no view made reads as none.
func TestViewedByUndoesViewDev(t *testing.T) {
	for _, dev := range []uint16{rootDev, workDev, tmpDev, firstDeviceDev + 2, procDev} {
		for _, o := range []owner{ownerGuest, ownerNobody, ownerRoot} {
			for _, perm := range []fs.FileMode{0, 0o644, 0o777 | fs.ModeSticky, 0o755 | fs.ModeSetuid | fs.ModeSetgid} {
				gotPerm, gotOwner, gotDev, ok := viewedBy(wsys.Stat_t{Dev: viewDev(dev, o, perm)})
				if !ok || gotPerm != perm || gotOwner != o || gotDev != dev {
					t.Errorf("viewedBy(viewDev(%d, %d, %v)) = %v, %d, %d, %v", dev, o, perm, gotPerm, gotOwner, gotDev, ok)
				}
			}
		}
	}
	if _, _, _, ok := viewedBy(wsys.Stat_t{Dev: 2049}); ok {
		t.Error("a host's device number read as a view")
	}
}

// A path longer than PATH_MAX is ENAMETOOLONG on every mount before the
// mount resolves it: a 40 MB path on a writable mount had the host split
// it into twenty million names (gigabytes in the wazero child, for one
// os.stat) where the native guest's kernel refuses it at once.
func TestPathTooLongRefusedFirst(t *testing.T) {
	d, _, _ := linkMount(t, 16)
	v := &nativeView{FS: d, dev: workDev, at: "/workspace", view: written(0o755, ownerGuest), owned: true}
	long := strings.Repeat("a/", 20_000_000)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for name, errno := range map[string]experimentalsys.Errno{
		"stat":     func() experimentalsys.Errno { _, e := v.Stat(long); return e }(),
		"lstat":    func() experimentalsys.Errno { _, e := v.Lstat(long); return e }(),
		"open":     func() experimentalsys.Errno { _, e := v.OpenFile(long, experimentalsys.O_RDONLY, 0); return e }(),
		"readlink": func() experimentalsys.Errno { _, e := v.Readlink(long); return e }(),
		"mkdir":    v.Mkdir(long, 0o755), "rmdir": v.Rmdir(long), "unlink": v.Unlink(long),
		"rename": v.Rename("x", long), "link": v.Link("x", long), "symlink": v.Symlink("x", long),
		"chmod": v.Chmod(long, 0o644), "utimens": v.Utimens(long, 0, 0),
	} {
		if errno != experimentalsys.ENAMETOOLONG {
			t.Errorf("%s of a 40 MB path: %v, want ENAMETOOLONG", name, errno)
		}
	}
	runtime.ReadMemStats(&after)
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing a 40 MB path allocated %d bytes", grew)
	}
	if _, errno := v.Stat(strings.Repeat("a/", 2000) + "x"); errno != experimentalsys.ENOENT {
		t.Errorf("a path under PATH_MAX: %v, want ENOENT", errno)
	}
}
