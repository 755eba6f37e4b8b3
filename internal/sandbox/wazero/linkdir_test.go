package wazero

import (
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// linkMount is a writable mount as a guest has it (linkDir over budgetDir
// over confinedDir) at /workspace, beside a host secret.
func linkMount(t *testing.T, maxFiles int64) (d *linkDir, root, secret string) {
	t.Helper()
	root = filepath.Join(t.TempDir(), "workspace")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	secret = filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("host"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := newBudgetDir(newConfinedDir(root, 1<<20), root, 1<<20, maxFiles)
	if err != nil {
		t.Fatal(err)
	}
	return newLinkDir(b, "/workspace", nil), root, secret
}

// readAll reads up to 64 bytes of name.
func readAll(t *testing.T, d experimentalsys.FS, name string) (string, experimentalsys.Errno) {
	t.Helper()
	f, errno := d.OpenFile(name, experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return "", errno
	}
	defer f.Close()
	buf := make([]byte, 64)
	n, errno := f.Read(buf)
	return string(buf[:n]), errno
}

func writeNew(d experimentalsys.FS, name, data string, flag experimentalsys.Oflag) experimentalsys.Errno {
	f, errno := d.OpenFile(name, experimentalsys.O_CREAT|experimentalsys.O_WRONLY|flag, 0o644)
	if errno != 0 {
		return errno
	}
	defer f.Close()
	_, errno = f.Write([]byte(data))
	return errno
}

func mustOK(t *testing.T, what string, errno experimentalsys.Errno) {
	t.Helper()
	if errno != 0 {
		t.Fatalf("%s: %v", what, errno)
	}
}

// TestLinkDirFollowsInside: links resolve as the native guest's kernel
// resolves them, inside the mount: relative, absolute, climbing out and
// back, chained, to directories, dangling (an open that creates makes the
// target), and what does not follow a last link sees the link.
func TestLinkDirFollowsInside(t *testing.T) {
	d, root, _ := linkMount(t, 100)
	mustOK(t, "write", writeNew(d, "a.txt", "A", 0))
	mustOK(t, "mkdir", d.Mkdir("dir", 0o755))
	for link, target := range map[string]string{
		"rel": "a.txt", "abs": "/workspace/a.txt", "back": "../workspace/a.txt",
		"chain": "rel", "dirlink": "dir", "dirabs": "/workspace/dir/", "dot": "./dir/../a.txt",
		"dangling": "made.txt", "loop": "loop", "loop2": "loop3", "loop3": "loop2",
	} {
		mustOK(t, "symlink "+link, d.Symlink(target, link))
	}
	for _, name := range []string{"rel", "abs", "back", "chain", "dot", "dirlink/../a.txt"} {
		if got, errno := readAll(t, d, name); errno != 0 || got != "A" {
			t.Errorf("read %s: %q %v", name, got, errno)
		}
	}
	// ".." after a link climbs from its target (wazero cleans a guest's
	// path lexically before it comes here; a link's target is not).

	mustOK(t, "create through a directory link", writeNew(d, "dirlink/new", "N", 0))
	mustOK(t, "create through an absolute directory link", writeNew(d, "dirabs/new2", "M", 0))
	mustOK(t, "mkdir through a directory link", d.Mkdir("dirlink/sub", 0o755))
	for _, p := range []string{"dir/new", "dir/new2", "dir/sub"} {
		if _, err := os.Lstat(filepath.Join(root, p)); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
	mustOK(t, "symlink deep", d.Symlink("dir/sub", "deep"))
	if got, errno := readAll(t, d, "deep/../new"); errno != 0 || got != "N" {
		t.Errorf("read deep/../new, dir/new: %q %v", got, errno)
	}
	mustOK(t, "create through a dangling link", writeNew(d, "dangling", "D", 0))
	if b, err := os.ReadFile(filepath.Join(root, "made.txt")); err != nil || string(b) != "D" {
		t.Errorf("the dangling link's target: %q %v", b, err)
	}
	if errno := writeNew(d, "rel", "X", experimentalsys.O_EXCL); errno != experimentalsys.EEXIST {
		t.Errorf("O_EXCL through a link: %v, want EEXIST", errno)
	}
	mustOK(t, "another dangling link", d.Symlink("never.txt", "dangling2"))
	if errno := writeNew(d, "dangling2", "X", experimentalsys.O_EXCL); errno != experimentalsys.EEXIST {
		t.Errorf("O_EXCL of a dangling link: %v, want EEXIST", errno)
	}
	if _, err := os.Lstat(filepath.Join(root, "never.txt")); !os.IsNotExist(err) {
		t.Errorf("O_EXCL of a dangling link made its target: %v", err)
	}
	if _, errno := d.OpenFile("rel", experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW, 0); errno != experimentalsys.ELOOP {
		t.Errorf("O_NOFOLLOW of a link: %v, want ELOOP", errno)
	}
	for _, name := range []string{"loop", "loop2", "loop/x"} {
		if _, errno := d.Stat(name); errno != experimentalsys.ELOOP {
			t.Errorf("stat %s: %v, want ELOOP", name, errno)
		}
	}

	if st, errno := d.Stat("chain"); errno != 0 || !st.Mode.IsRegular() || st.Size != 1 {
		t.Errorf("stat chain: %v %v", st.Mode, errno)
	}
	if st, errno := d.Lstat("chain"); errno != 0 || st.Mode&fs.ModeSymlink == 0 {
		t.Errorf("lstat chain: %v %v", st.Mode, errno)
	}
	if st, errno := d.Lstat("dirlink/new"); errno != 0 || !st.Mode.IsRegular() {
		t.Errorf("lstat through a directory link: %v %v", st.Mode, errno)
	}
	if target, errno := d.Readlink("dirabs"); errno != 0 || target != "/workspace/dir/" {
		t.Errorf("readlink: %q %v", target, errno)
	}
	mustOK(t, "chmod through a link", d.Chmod("rel", 0o600))
	if fi, err := os.Stat(filepath.Join(root, "a.txt")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("chmod through a link: %v %v", fi.Mode(), err)
	}
	mustOK(t, "utimens through a link", d.Utimens("rel", 1e9, 2e9))
	if fi, err := os.Stat(filepath.Join(root, "a.txt")); err != nil || fi.ModTime().UnixNano() != 2e9 {
		t.Errorf("utimens through a link: %v %v", fi.ModTime(), err)
	}
	mustOK(t, "lutimens of a link", d.Lutimens("rel", 3e9, 4e9))
	if fi, err := os.Lstat(filepath.Join(root, "rel")); err != nil || fi.ModTime().UnixNano() != 4e9 {
		t.Errorf("lutimens of a link, the link: %v %v", fi.ModTime(), err)
	}
	if fi, err := os.Stat(filepath.Join(root, "a.txt")); err != nil || fi.ModTime().UnixNano() != 2e9 {
		t.Errorf("lutimens of a link, its target: %v %v", fi.ModTime(), err)
	}
	mustOK(t, "lutimens through a directory link", d.Lutimens("dirlink/new", experimentalsys.UTIME_OMIT, 5e9))
	if fi, err := os.Stat(filepath.Join(root, "dir/new")); err != nil || fi.ModTime().UnixNano() != 5e9 {
		t.Errorf("lutimens through a directory link: %v %v", fi.ModTime(), err)
	}
	mustOK(t, "hard link through a directory link", d.Link("dirlink/new", "hard"))
	mustOK(t, "rename a link", d.Rename("chain", "dirlink/chain"))
	if got, errno := readAll(t, d, "dir/chain"); errno != experimentalsys.ENOENT {
		// "rel" relative to dir/ does not exist: a moved link keeps its text.
		t.Errorf("a moved relative link: %q %v, want ENOENT", got, errno)
	}
	mustOK(t, "unlink a link", d.Unlink("rel"))
	if got, errno := readAll(t, d, "a.txt"); errno != 0 || got != "A" {
		t.Errorf("the target after its link's unlink: %q %v", got, errno)
	}
	if errno := d.Rmdir("dirlink"); errno != experimentalsys.ENOTDIR {
		t.Errorf("rmdir of a directory link: %v, want ENOTDIR", errno)
	}
}

// TestLinkDirStaysInside: a link that leads out of the mount, to a host
// path, above the root, or to another of the guest's directories, dangles
// for everything that would follow it: nothing outside is read, written,
// made or changed, and the link itself can be read and removed.
func TestLinkDirStaysInside(t *testing.T) {
	d, root, secret := linkMount(t, 100)
	outside := filepath.Dir(secret)
	climb := strings.Repeat("../", 20) + strings.TrimPrefix(secret, "/")
	links := map[string]string{
		"abs": secret, "climb": climb, "root": "/", "tmp": "/tmp", "up": "..", "updir": "../" + filepath.Base(outside),
		"hostdir": outside, "rootup": "/..", "newfile": filepath.Join(outside, "new"),
	}
	for link, target := range links {
		mustOK(t, "symlink "+link, d.Symlink(target, link))
	}
	mustOK(t, "a file", writeNew(d, "mine", "M", 0))
	for link := range links {
		for _, name := range []string{link, link + "/secret", link + "/x/y"} {
			if _, errno := d.Stat(name); errno != experimentalsys.ENOENT {
				t.Errorf("stat %s: %v, want ENOENT", name, errno)
			}
			if _, errno := readAll(t, d, name); errno != experimentalsys.ENOENT {
				t.Errorf("open %s: %v, want ENOENT", name, errno)
			}
			if errno := writeNew(d, name, "stolen", 0); errno != experimentalsys.ENOENT {
				t.Errorf("create %s: %v, want ENOENT", name, errno)
			}
			if errno := d.Chmod(name, 0o777); errno != experimentalsys.ENOENT {
				t.Errorf("chmod %s: %v, want ENOENT", name, errno)
			}
			if errno := d.Utimens(name, 0, 0); errno != experimentalsys.ENOENT {
				t.Errorf("utimens %s: %v, want ENOENT", name, errno)
			}
		}
		for _, name := range []string{link + "/secret", link + "/new"} {
			if errno := d.Unlink(name); errno != experimentalsys.ENOENT {
				t.Errorf("unlink %s: %v, want ENOENT", name, errno)
			}
			if errno := d.Mkdir(name, 0o777); errno != experimentalsys.ENOENT {
				t.Errorf("mkdir %s: %v, want ENOENT", name, errno)
			}
			if errno := d.Symlink("x", name); errno != experimentalsys.ENOENT {
				t.Errorf("symlink %s: %v, want ENOENT", name, errno)
			}
			if errno := d.Link("mine", name); errno != experimentalsys.ENOENT {
				t.Errorf("link %s: %v, want ENOENT", name, errno)
			}
			if errno := d.Rename(link, name); errno != experimentalsys.ENOENT {
				t.Errorf("rename into %s: %v, want ENOENT", name, errno)
			}
		}
		if target, errno := d.Readlink(link); errno != 0 || target != links[link] {
			t.Errorf("readlink %s: %q %v", link, target, errno)
		}
	}
	entries, err := os.ReadDir(outside)
	if err != nil || len(entries) != 1 {
		t.Fatalf("outside the mount: %v %v, want the secret alone", entries, err)
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "host" {
		t.Fatalf("the secret: %q %v", b, err)
	}
	if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the secret's mode: %v %v", fi.Mode(), err)
	}
	for _, name := range append([]string{"mine"}, keys(links)...) {
		mustOK(t, "unlink "+name, d.Unlink(name))
	}
	if entries, err := os.ReadDir(root); err != nil || len(entries) != 0 {
		t.Fatalf("the mount after: %v %v", entries, err)
	}
}

// TestLinkDirBudget: a link costs a file of the mount's budget; a full
// mount refuses the next, and removing one frees its file.
func TestLinkDirBudget(t *testing.T) {
	d, _, _ := linkMount(t, 3) // the mount's directory, and two more
	mustOK(t, "first", d.Symlink("a", "l1"))
	mustOK(t, "second", d.Symlink("b", "l2"))
	if errno := d.Symlink("c", "l3"); errno != experimentalsys.EIO {
		t.Fatalf("a link past the budget: %v, want EIO (the guest's ENOSPC)", errno)
	}
	if errno := d.Symlink("c", "l1"); errno != experimentalsys.EEXIST {
		t.Fatalf("a link over a name in a full mount: %v, want EEXIST", errno)
	}
	mustOK(t, "unlink", d.Unlink("l1"))
	mustOK(t, "after a free", d.Symlink("c", "l3"))
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestLinkDirAcrossMounts: a link that leads to another of the guest's
// mounts is followed there, with that mount's answers; back and forth
// between two mounts ends in ELOOP; a rename or link between two mounts
// is ENOSYS (the WASI build's EXDEV); a path no mount holds is ENOENT.
func TestLinkDirAcrossMounts(t *testing.T) {
	mounts := &guestMounts{byPath: map[string]experimentalsys.FS{}}
	mount := func(at string) (*linkDir, string) {
		root := t.TempDir()
		b, err := newBudgetDir(newConfinedDir(root, 1<<20), root, 1<<20, 100)
		if err != nil {
			t.Fatal(err)
		}
		d := newLinkDir(b, at, mounts)
		mounts.byPath[at] = d
		return d, root
	}
	work, _ := mount("/workspace")
	tmp, tmpRoot := mount("/tmp")
	mounts.byPath["/etc"] = newReadOnly(&sysfs.AdaptFS{FS: fstest.MapFS{"hostname": {Data: []byte("sandbox")}}})

	mustOK(t, "a file in /tmp", writeNew(tmp, "t.txt", "T", 0))
	for link, target := range map[string]string{
		"t": "/tmp/t.txt", "tdir": "/tmp", "up": "../tmp/t.txt", "h": "/etc/hostname", "etc": "../etc",
		"made": "/tmp/made.txt", "nowhere": "/nowhere/x", "ping": "/tmp/pong",
	} {
		mustOK(t, "symlink "+link, work.Symlink(target, link))
	}
	mustOK(t, "symlink pong", tmp.Symlink("/workspace/ping", "pong"))
	for name, want := range map[string]string{"t": "T", "tdir/t.txt": "T", "up": "T", "h": "sandbox", "etc/hostname": "sandbox"} {
		if got, errno := readAll(t, work, name); errno != 0 || got != want {
			t.Errorf("read %s: %q %v, want %q", name, got, errno, want)
		}
	}
	mustOK(t, "create through a link to /tmp", writeNew(work, "made", "M", 0))
	if b, err := os.ReadFile(filepath.Join(tmpRoot, "made.txt")); err != nil || string(b) != "M" {
		t.Errorf("made through a link: %q %v", b, err)
	}
	mustOK(t, "mkdir in /tmp through a link", work.Mkdir("tdir/d", 0o755))
	if st, errno := tmp.Stat("d"); errno != 0 || !st.Mode.IsDir() {
		t.Errorf("mkdir through a link: %v %v", st.Mode, errno)
	}
	direct := writeNew(mounts.byPath["/etc"], "hostname", "x", 0)
	if errno := writeNew(work, "h", "x", 0); direct == 0 || errno != direct {
		t.Errorf("write through a link to a read-only mount: %v, want the mount's own answer, %v", errno, direct)
	}
	if errno := work.Unlink("etc/hostname"); errno != experimentalsys.EROFS {
		t.Errorf("unlink through a link to a read-only mount: %v, want EROFS", errno)
	}
	if _, errno := work.Stat("nowhere"); errno != experimentalsys.ENOENT {
		t.Errorf("a link no mount holds: %v, want ENOENT", errno)
	}
	if _, errno := work.Stat("ping"); errno != experimentalsys.ELOOP {
		t.Errorf("links back and forth: %v, want ELOOP", errno)
	}
	if mounts.hops.Load() != 0 {
		t.Errorf("hops left counted: %d", mounts.hops.Load())
	}
	if errno := work.Rename("tdir/t.txt", "moved"); errno != experimentalsys.ENOSYS {
		t.Errorf("rename from /tmp into /workspace: %v, want ENOSYS", errno)
	}
	mustOK(t, "rename within /tmp through links", work.Rename("tdir/t.txt", "tdir/u.txt"))
	if target, errno := work.Readlink("t"); errno != 0 || target != "/tmp/t.txt" {
		t.Errorf("readlink: %q %v", target, errno)
	}
}

// FuzzLinkDir: whatever links a guest makes and whatever path it then
// names, resolve hands its mount a clean path inside it, and no call
// through the mount reads, makes or changes anything outside: beside the
// mount lies a host secret, and a directory, /tmp, another mount.
func FuzzLinkDir(f *testing.F) {
	for _, seed := range [][4]string{
		{"a.txt", "/workspace/d", "l1", "l2/f"}, {"../../..", "/", "l1/etc/passwd", "l2/etc"},
		{"../tmp", "/tmp/../workspace/l1", "l1/x", "l2"}, {"l2", "l1", "l1", "l2/x"},
		{"d/../../secret", "/workspace/../secret", "l1", "l2"}, {"/tmp/l", "//workspace///d/", "l2/new", "../l1"},
		{".", "..", "l1/l1/l1", "l2/../secret"}, {"", "d/\x00", "d/./../l2", "/workspace"},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	f.Fuzz(func(t *testing.T, target1, target2, name1, name2 string) {
		mounts := &guestMounts{byPath: map[string]experimentalsys.FS{}}
		base := t.TempDir()
		roots := map[string]string{}
		for _, at := range []string{"/workspace", "/tmp"} {
			root := filepath.Join(base, strings.TrimPrefix(at, "/"))
			if err := os.MkdirAll(filepath.Join(root, "d"), 0o755); err != nil {
				t.Fatal(err)
			}
			b, err := newBudgetDir(newConfinedDir(root, 1<<20), root, 1<<20, 100)
			if err != nil {
				t.Fatal(err)
			}
			mounts.byPath[at] = newLinkDir(b, at, mounts)
			roots[at] = root
		}
		secret := filepath.Join(base, "secret")
		if err := os.WriteFile(secret, []byte("host"), 0o600); err != nil {
			t.Fatal(err)
		}
		work := mounts.byPath["/workspace"].(*linkDir)
		_ = work.Symlink(target1, "l1")
		_ = work.Symlink(target2, "l2")
		for _, name := range []string{name1, name2} {
			for _, last := range []bool{true, false} {
				fsys, p, errno := work.resolve(name, last)
				if errno != 0 {
					continue
				}
				if c := strings.TrimSuffix(p, "/"); p != "." && (path.Clean(c) != c || strings.HasPrefix(c, "/") || c == ".." || strings.HasPrefix(c, "../")) {
					t.Fatalf("resolve(%q, %v) = %q: not a clean path inside a mount", name, last, p)
				}
				if fsys != work.FS && fsys != mounts.byPath["/tmp"] && fsys != mounts.byPath["/workspace"] {
					t.Fatalf("resolve(%q, %v) led to an unknown file system", name, last)
				}
			}
			_, _ = readAll(t, work, name)
			_ = writeNew(work, name, "x", 0)
			_ = work.Mkdir(name+"/m", 0o755)
			_ = work.Chmod(name, 0o777)
			_ = work.Utimens(name, 0, 0)
			_ = work.Lutimens(name, 0, 0)
			_ = work.Symlink("/", name+"/s")
			_ = work.Link("l1", name+"/h")
			_ = work.Rename("l2", name+"/r")
			_ = work.Unlink(name + "/secret")
		}
		if mounts.hops.Load() != 0 {
			t.Fatalf("hops left counted: %d", mounts.hops.Load())
		}
		entries, err := os.ReadDir(base)
		if err != nil || len(entries) != 3 {
			t.Fatalf("beside the mounts: %v %v, want secret, tmp and workspace alone", entries, err)
		}
		if b, err := os.ReadFile(secret); err != nil || string(b) != "host" {
			t.Fatalf("the secret: %q %v", b, err)
		}
		if fi, err := os.Stat(secret); err != nil || fi.Mode().Perm() != 0o600 || fi.ModTime().Unix() == 0 {
			t.Fatalf("the secret's mode or time: %v %v", fi.Mode(), err)
		}
	})
}
