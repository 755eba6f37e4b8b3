package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"
)

// MountTmpfs mounts with the bounds asked for; a process that may not
// mount (EPERM) leaves the directory plain without an error; any other
// failure is one.
func TestMountTmpfs(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		unmount, err := MountTmpfs(dir, 0o700, 1<<20, 64)
		if err != nil || unmount == nil {
			t.Fatalf("mounted %v err %v", unmount != nil, err)
		}
		mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
		if err != nil || len(mounts) != 1 || mounts[0].FSType != "tmpfs" || !strings.Contains(mounts[0].VFSOptions, "size=1024k,nr_inodes=64,mode=700") {
			t.Errorf("mounts %+v (%v)", mounts, err)
		}
		if err := unmount(); err != nil {
			t.Fatal(err)
		}
		if mounts, _ := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir)); len(mounts) != 0 {
			t.Errorf("still mounted after unmount: %+v", mounts)
		}
		if _, err := MountTmpfs(dir, 0o700, 1<<20, 64); err != nil {
			t.Fatal(err)
		}
		DetachMountsUnder(dir)
		if mounts, _ := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir)); len(mounts) != 0 {
			t.Errorf("still mounted after DetachMountsUnder: %+v", mounts)
		}
		// Named relative to the working directory, or through a link:
		// mountinfo's paths are absolute and resolved (apysup serve
		// --state st left its mounts).
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(dir, link); err != nil {
			t.Fatal(err)
		}
		cwd, _ := os.Getwd()
		relative, err := filepath.Rel(cwd, dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { // a failure below leaves nothing mounted
			for unix.Unmount(dir, unix.MNT_DETACH) == nil {
			}
		})
		for _, name := range []string{relative, link} {
			if _, err := MountTmpfs(dir, 0o700, 1<<20, 64); err != nil {
				t.Fatal(err)
			}
			DetachMountsUnder(name)
			if mounts, _ := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir)); len(mounts) != 0 {
				t.Errorf("still mounted after DetachMountsUnder(%q): %+v", name, mounts)
			}
		}
	}
	defer func(m func(string, string, string, uintptr, string) error) { mount = m }(mount)
	for _, tc := range []struct {
		errno   error
		wantErr bool
	}{{unix.EPERM, false}, {unix.ENODEV, true}, {unix.EINVAL, true}} {
		mount = func(string, string, string, uintptr, string) error { return tc.errno }
		unmount, err := MountTmpfs(dir, 0o700, 1<<20, 64)
		mounted := unmount != nil
		if os.Geteuid() != 0 {
			tc.wantErr = false // not even tried
		}
		if mounted || (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, tc.errno)) {
			t.Errorf("mount failing with %v: mounted %v err %v", tc.errno, mounted, err)
		}
	}
}
