package wazero

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// /proc holds procFiles alone, read from the host's at each open with a
// size of 0, as the proc file system says; any other name, the
// per-process files and any path that leaves the directory are not there.
func TestProcFS(t *testing.T) {
	host := t.TempDir()
	for _, name := range append(slices.Clone(procFiles), "mounts", "environ") {
		if err := os.WriteFile(filepath.Join(host, name), []byte(name+" 1\n"), 0o444); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(host, "self"), 0o755); err != nil {
		t.Fatal(err)
	}
	p := procFS{hostDir: host}
	if names := dirNames(t, p, "."); !slices.Equal(names, procFiles) {
		t.Errorf("/proc lists %v, want %v", names, procFiles)
	}
	f, err := p.Open("meminfo")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(host, "meminfo"), []byte("changed\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(f.(io.Reader))
	st, _ := f.Stat()
	if string(data) != "meminfo 1\n" || st.Size() != 0 || st.Mode() != 0o444 {
		t.Errorf("meminfo read %q, size %d, mode %v; want its content at open, 0 and 0444", data, st.Size(), st.Mode())
	}
	if again, err := fs.ReadFile(p, "meminfo"); err != nil || string(again) != "changed\n" {
		t.Errorf("meminfo opened again: %q, %v", again, err)
	}
	for _, name := range []string{"mounts", "environ", "self", "self/status", "../meminfo", "/meminfo", "./meminfo", "meminfo/"} {
		if _, err := p.Open(name); !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("%q opened: %v", name, err)
		}
	}
	if err := os.Remove(filepath.Join(host, "uptime")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Open("uptime"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("uptime missing on the host: %v", err)
	}
}

// The guest names any path under /proc: only "." and procFiles open, each
// with its host file's content, whatever the name.
func FuzzProcFSOpen(f *testing.F) {
	for _, seed := range []string{".", "meminfo", "self/status", "../etc/passwd", "1/environ", "mounts", "meminfo\x00", "./cpuinfo", ""} {
		f.Add(seed)
	}
	host := f.TempDir()
	for _, name := range append(slices.Clone(procFiles), "mounts", "environ") {
		if err := os.WriteFile(filepath.Join(host, name), []byte(name), 0o444); err != nil {
			f.Fatal(err)
		}
	}
	p := procFS{hostDir: host}
	f.Fuzz(func(t *testing.T, name string) {
		file, err := p.Open(name)
		allowed := name == "." || slices.Contains(procFiles, name)
		if (err == nil) != allowed {
			t.Fatalf("Open(%q): %v", name, err)
		}
		if err != nil || name == "." {
			return
		}
		if data, _ := io.ReadAll(file.(io.Reader)); string(data) != name {
			t.Errorf("Open(%q) read %q", name, data)
		}
	})
}

// dirNames lists dir in fsys by name, failing t if it cannot.
func dirNames(t *testing.T, fsys fs.FS, dir string) []string {
	t.Helper()
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// A /proc file, mounted, answers pread from its content and refuses
// SEEK_END, as the proc file system's files do: shutil's copies under WASI
// read by pread, and read a copy of /proc/cpuinfo as empty while the
// file's size (0) stood for its end.
func TestProcMountPread(t *testing.T) {
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "cpuinfo"), []byte("processor : 0\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	m := newProcMount(host)
	f, errno := m.OpenFile("cpuinfo", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	defer f.Close()
	buf := make([]byte, 9)
	if n, errno := f.Pread(buf, 0); n != 9 || errno != 0 || string(buf) != "processor" {
		t.Errorf("pread at 0: %d %q %v", n, buf[:n], errno)
	}
	if n, errno := f.Pread(buf, 12); n != 2 || errno != 0 {
		t.Errorf("pread at 12: %d %v, want the last 2 bytes", n, errno)
	}
	if n, errno := f.Pread(buf, 1000); n != 0 || errno != 0 {
		t.Errorf("pread past the end: %d %v", n, errno)
	}
	if _, errno := f.Seek(0, io.SeekEnd); errno != experimentalsys.EINVAL {
		t.Errorf("SEEK_END: %v, want EINVAL", errno)
	}
	if at, errno := f.Seek(1000, io.SeekStart); at != 1000 || errno != 0 {
		t.Errorf("seek past the end: %d %v", at, errno)
	}
	if n, errno := f.Read(buf); n != 0 || errno != 0 {
		t.Errorf("read past the end: %d %v", n, errno)
	}
	if errno := f.Sync(); errno != 0 {
		t.Errorf("fsync: %v", errno)
	}
}
