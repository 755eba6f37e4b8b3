package wazero

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// A writable mount answers as a tmpfs of its limits: on a tmpfs of its own
// (as root) what the kernel counts there, on a plain directory what its
// budget counts, in whole blocks.
func TestWritableMountStatvfs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("statfs(2) is Linux's") // the backend runs in-process there and answers ENOSYS
	}
	const limitBytes, limitFiles = 1<<20 + 1, 40
	for _, tmpfs := range []bool{false, true} {
		dir := t.TempDir()
		if tmpfs {
			testenv.Need(t, os.Geteuid() == 0, "root, to mount a tmpfs")
			unmount, err := sandbox.MountTmpfs(dir, 0o755, 8<<20, 100)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = unmount() })
		}
		for _, f := range []struct {
			name string
			size int
		}{{"a", 1}, {"b", 4097}, {"c", 0}} {
			if err := os.WriteFile(filepath.Join(dir, f.name), make([]byte, f.size), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		budget, err := newBudgetDir(newConfinedDir(dir, 1<<30), dir, limitBytes, limitFiles)
		if err != nil {
			t.Fatal(err)
		}
		m := newMountStats()
		m.bind(tmpDev, dir, limitBytes, limitFiles, writableFlags, budget)
		v, errno := m.statvfs(tmpDev)
		if errno != 0 {
			t.Fatal(errno)
		}
		// 257 blocks (the size rounded up to pages); 4 inodes (the
		// directory and three files); pages: 1 + 2, on a tmpfs and by
		// the budget alike.
		wantUsed := uint64(3)
		if v.bsize != 4096 || v.frsize != 4096 || v.blocks != 257 || v.bfree != 257-wantUsed || v.bavail != v.bfree ||
			v.files != limitFiles || v.ffree != limitFiles-4 || v.favail != v.ffree || v.flag != 4102 || v.namemax != 255 {
			t.Errorf("tmpfs %v: %+v", tmpfs, v)
		}
	}
}

// The root is the host's filesystem, read-only; /dev the native sandbox's
// small tmpfs; its nodes the host's; anything else has no answer.
func TestMountStatvfs(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("statfs(2) is Linux's")
	}
	m := newMountStats()
	root, errno := m.statvfs(rootDev)
	host, herrno := hostStatvfs("/")
	if errno != 0 || herrno != 0 || root.flag != host.flag|stRdonly || root.blocks != host.blocks || root.fsid != host.fsid || root.flag&stValid != 0 {
		t.Errorf("root %+v (%v), host %+v (%v)", root, errno, host, herrno)
	}
	dev, errno := m.statvfs(devDev)
	if errno != 0 || dev.blocks != sandbox.DevBytes/4096 || dev.files != sandbox.DevFiles ||
		dev.ffree != sandbox.DevFiles-1-uint64(len(deviceNames)) || dev.flag != stNosuid|stNoexec {
		t.Errorf("/dev %+v (%v)", dev, errno)
	}
	null, errno := m.statvfs(firstDeviceDev + 1)
	if want, _ := hostStatvfs("/dev/null"); errno != 0 || null != want {
		t.Errorf("/dev/null %+v (%v), want %+v", null, errno, want)
	}
	if proc, errno := m.statvfs(procDev); errno != 0 || proc != procStatvfs() || proc.blocks != 0 || proc.flag&stRdonly != 0 {
		t.Errorf("/proc %+v (%v)", proc, errno)
	}
	if procDev != firstDeviceDev+uint16(len(deviceNames)) {
		t.Errorf("/proc's device %d is not the one after the devices'", procDev)
	}
	for _, d := range []uint16{0, outDev, workDev, tmpDev, procDev + 1, 0xffff} {
		if _, errno := m.statvfs(d); errno != experimentalsys.ENOSYS {
			t.Errorf("device %d: %v, want ENOSYS", d, errno)
		}
	}
}

// The guest reads eleven little-endian 64-bit fields in statvfs(3)'s order.
func TestVfsStatEncoding(t *testing.T) {
	b := vfsStat{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}.encode()
	if len(b) != 88 {
		t.Fatalf("%d bytes", len(b))
	}
	for i := range 11 {
		if got := binary.LittleEndian.Uint64(b[i*8:]); got != uint64(i+1) {
			t.Errorf("field %d = %d", i, got)
		}
	}
}
