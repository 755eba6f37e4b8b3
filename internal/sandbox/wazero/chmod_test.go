package wazero

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
)

// apysup_fs.chmod changes the nine permission bits of a file on a
// writable mount, never through a symlink, and answers as natively
// elsewhere: EROFS on a read-only mount, EPERM on /dev and on root's
// mount points.
func TestChmodIn(t *testing.T) {
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"f": "x", "d/g": "y"} {
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("d", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	work := &nativeView{FS: newConfinedDir(dir, 1<<20), dev: workDev, view: written(0o755, ownerGuest), owned: true}
	mounts := map[string]experimentalsys.FS{
		"/workspace": work,
		"/tmp":       &nativeView{FS: newConfinedDir(t.TempDir(), 1<<20), dev: tmpDev, view: written(0o777|fs.ModeSticky, ownerRoot), owned: true},
		"/usr/lib":   &nativeView{FS: newReadOnly(sysfs.DirFS(dir)), dev: rootDev, view: installedView(0o644)},
		"/dev":       &nativeView{FS: newDevices(io.Discard, io.Discard), dev: devDev, view: devicesView},
	}
	mode := func(name string) fs.FileMode {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		return fi.Mode()
	}
	for _, c := range []struct {
		mount, name string
		mode        fs.FileMode
		want        experimentalsys.Errno
	}{
		{"/workspace", "f", 0o600, 0},
		{"/workspace", "d", 0o700, 0},
		{"/workspace", "d/g", 0o4755 | fs.ModeSetuid, 0},
		{"/workspace", "missing", 0o600, experimentalsys.ENOENT},
		{"/workspace", "link/g", 0o600, experimentalsys.ELOOP},
		{"/workspace", "../f", 0o600, experimentalsys.EINVAL},
		{"/workspace", "/f", 0o600, experimentalsys.EINVAL},
		{"/workspace", "d/../f", 0o600, experimentalsys.EINVAL},
		{"/workspace", ".", 0o700, 0},
		{"/tmp", ".", 0o700, experimentalsys.EPERM},
		{"/usr/lib", "f", 0o600, experimentalsys.EROFS},
		{"/usr/lib", ".", 0o700, experimentalsys.EROFS},
		{"/dev", "null", 0o600, experimentalsys.EPERM},
		{"/dev", ".", 0o700, experimentalsys.EPERM},
		{"/nowhere", "f", 0o600, experimentalsys.ENOENT},
		{"workspace", "f", 0o640, 0}, // wasi-libc's name for the preopen
		{"usr/lib", "f", 0o600, experimentalsys.EROFS},
	} {
		if got := chmodIn(mounts, c.mount, c.name, c.mode); got != c.want {
			t.Errorf("chmod %s %s: %v, want %v", c.mount, c.name, got, c.want)
		}
	}
	if mode("f").Perm() != 0o640 || mode("d").Perm() != 0o700 {
		t.Errorf("modes %v %v", mode("f"), mode("d"))
	}
	if m := mode("d/g"); m != 0o755 {
		t.Errorf("d/g: %v: only the nine permission bits reach the host", m)
	}
	// The guest's own mount point keeps its new bits in the view, not on
	// the host.
	if st, errno := work.Stat("."); errno != 0 || st.Dev != viewDev(workDev, ownerGuest, 0o700) {
		t.Errorf("/workspace after chmod: %#x %v", st.Dev, errno)
	}
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("host directory: %v %v, want it as it was", fi, err)
	}
}

// wasiErrno answers with wasi-libc's numbers (its wasi/api.h).
func TestWASIErrnos(t *testing.T) {
	header, err := os.ReadFile("/usr/include/wasm32-wasi/wasi/api.h")
	testenv.Need(t, err == nil, "wasi-libc's headers (wasi-libc, installed by make wasi-python)")
	names := map[experimentalsys.Errno]string{
		experimentalsys.EACCES: "ACCES", experimentalsys.EAGAIN: "AGAIN", experimentalsys.EBADF: "BADF",
		experimentalsys.EEXIST: "EXIST", experimentalsys.EFAULT: "FAULT", experimentalsys.EINTR: "INTR",
		experimentalsys.EINVAL: "INVAL", experimentalsys.EIO: "IO", experimentalsys.EISDIR: "ISDIR",
		experimentalsys.ELOOP: "LOOP", experimentalsys.ENAMETOOLONG: "NAMETOOLONG", experimentalsys.ENOENT: "NOENT",
		experimentalsys.ENOSYS: "NOSYS", experimentalsys.ENOTDIR: "NOTDIR", experimentalsys.ENOTEMPTY: "NOTEMPTY",
		experimentalsys.ENOTSOCK: "NOTSOCK", experimentalsys.ENOTSUP: "NOTSUP", experimentalsys.EPERM: "PERM",
		experimentalsys.ERANGE: "RANGE", experimentalsys.EROFS: "ROFS",
	}
	if len(names) != len(wasiErrnos) {
		t.Fatalf("%d names for %d errnos", len(names), len(wasiErrnos))
	}
	for errno, name := range names {
		m := regexp.MustCompile(`#define __WASI_ERRNO_` + name + ` \(UINT16_C\((\d+)\)\)`).FindSubmatch(header)
		if m == nil {
			t.Fatalf("no __WASI_ERRNO_%s in wasi/api.h", name)
		}
		if want, _ := strconv.Atoi(string(m[1])); wasiErrno(errno) != int32(want) {
			t.Errorf("%s: %d, want %d", name, wasiErrno(errno), want)
		}
	}
	if wasiErrno(0) != 0 || wasiErrno(experimentalsys.Errno(999)) != wasiErrno(experimentalsys.EIO) {
		t.Error("0 or an unknown errno")
	}
}

// Whatever mount and path the guest hands over, chmod changes nothing
// outside the mount, follows no symlink and never panics.
func FuzzChmodIn(f *testing.F) {
	for _, seed := range [][2]string{{"workspace", "f"}, {"", "workspace/f"}, {"workspace", "../outside"},
		{"workspace", "link/g"}, {"workspace", "d/../../outside"}, {"/workspace/", "./f"}, {"..", "outside"},
		{"workspace", "/outside"}, {"workspace", "link"}, {"workspace\x00", "f"}} {
		f.Add(seed[0], seed[1], uint32(0o777))
	}
	f.Fuzz(func(t *testing.T, mount, name string, mode uint32) {
		root := t.TempDir()
		inside := filepath.Join(root, "in")
		if err := os.MkdirAll(filepath.Join(inside, "d"), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{filepath.Join(root, "outside"), filepath.Join(inside, "f"), filepath.Join(inside, "d", "g")} {
			if err := os.WriteFile(p, nil, 0o640); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink(root, filepath.Join(inside, "link")); err != nil {
			t.Fatal(err)
		}
		mounts := map[string]experimentalsys.FS{
			"/workspace": &nativeView{FS: newConfinedDir(inside, 1<<20), dev: workDev, view: written(0o755, ownerGuest), owned: true},
		}
		modes := func() (m [2]fs.FileMode) {
			for i, p := range []string{root, filepath.Join(root, "outside")} {
				fi, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				m[i] = fi.Mode()
			}
			return m
		}
		before := modes()
		_ = chmodIn(mounts, mount, name, fs.FileMode(mode))
		if after := modes(); after != before {
			t.Fatalf("chmod %q %q %o changed the outside: %v -> %v", mount, name, mode, before, after)
		}
		for _, p := range []string{filepath.Join(inside, "f"), filepath.Join(inside, "d", "g")} {
			if fi, err := os.Stat(p); err != nil || fi.Mode()&^fs.ModePerm != 0 {
				t.Fatalf("%s: %v %v: more than permission bits", p, fi, err)
			}
		}
	})
}

// apysup_fs.fd_path answers a descriptor's guest path: its mount's, and
// the path inside the mount it was opened by (the corpus's
// fs_chmod_descriptors.py opens files); minus the errno for a descriptor
// that is not open or on no mount; the length alone when the buffer is
// too small, and EFAULT for a buffer outside the guest's memory.
func TestFdPath(t *testing.T) {
	ctx := context.Background()
	r := wazero.NewRuntime(ctx)
	defer r.Close(ctx)
	work, root := sysfs.DirFS(t.TempDir()), sysfs.DirFS(t.TempDir())
	fsc := wazero.NewFSConfig().(sysfs.FSConfig).WithSysFSMount(work, "/workspace").(sysfs.FSConfig).WithSysFSMount(root, "/")
	// A module of one page of memory and nothing else.
	mod, err := r.InstantiateWithConfig(ctx, []byte("\x00asm\x01\x00\x00\x00\x05\x03\x01\x00\x01"), wazero.NewModuleConfig().WithFSConfig(fsc))
	if err != nil {
		t.Fatal(err)
	}
	ctx = context.WithValue(ctx, mountedAtKey{}, map[experimentalsys.FS]string{work: "/workspace", root: "/"})
	call := func(fd int32, ptr, n uint32) int32 {
		stack := []uint64{api.EncodeI32(fd), api.EncodeU32(ptr), api.EncodeU32(n)}
		hostFdPath(ctx, mod, stack)
		return api.DecodeI32(stack[0])
	}
	for _, c := range []struct {
		fd   int32
		want string
		ret  int32
	}{
		{fd: 3, want: "/workspace", ret: 10}, // the pre-opens, in order
		{fd: 4, want: "/", ret: 1},
		{fd: 1, ret: -wasiErrno(experimentalsys.ENOTSUP)}, // stdout
		{fd: 9, ret: -wasiErrno(experimentalsys.EBADF)},
	} {
		mod.Memory().Write(0, make([]byte, 64))
		if got := call(c.fd, 0, 64); got != c.ret {
			t.Errorf("fd %d: %d, want %d", c.fd, got, c.ret)
		}
		if got, _ := mod.Memory().Read(0, uint32(len(c.want))); string(got) != c.want {
			t.Errorf("fd %d: %q, want %q", c.fd, got, c.want)
		}
	}
	mod.Memory().Write(0, []byte("untouched!"))
	if got := call(3, 0, 9); got != 10 {
		t.Errorf("a buffer too small: %d, want the length", got)
	}
	if got, _ := mod.Memory().Read(0, 10); string(got) != "untouched!" {
		t.Errorf("a buffer too small was written: %q", got)
	}
	if got := call(3, 65536-4, 64); got != -wasiErrno(experimentalsys.EFAULT) {
		t.Errorf("a buffer past the memory's end: %d, want -EFAULT", got)
	}
}
