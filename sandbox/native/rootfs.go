package native

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/apysup/apysup/sandbox/doctor"
)

// Top-level system directories a guest may see. /usr is always bound;
// the others are symlinks into /usr on merged-/usr systems (Debian 12) and
// are then recreated as symlinks, otherwise bound read-only too.
var systemDirs = []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"}

// Mount points of the skeleton; every bind target exists before a run so
// that libcontainer never writes into the shared, read-only root.
var skeletonDirs = []string{
	"usr", "etc", "dev", "proc", "tmp", "workspace",
	"opt/apysup", "run/apysup",
}

// The generated /etc: no host configuration reaches a guest.
var etcFiles = map[string]string{
	"passwd": fmt.Sprintf("root:x:0:0:root:/nonexistent:/usr/sbin/nologin\n"+
		"sandbox:x:%d:%d:sandbox:/workspace:/usr/sbin/nologin\n"+
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n", GuestUID, GuestGID),
	"group":         fmt.Sprintf("root:x:0:\nsandbox:x:%d:\nnogroup:x:65534:\n", GuestGID),
	"hosts":         "127.0.0.1\tlocalhost\n::1\tlocalhost\n",
	"hostname":      "sandbox\n",
	"nsswitch.conf": "passwd: files\ngroup: files\nhosts: files\nnetworks: files\nprotocols: files\nservices: files\n",
	"resolv.conf":   "",
}

// rootfs is the shared, read-only skeleton root of every run of a Backend.
type rootfs struct {
	dir   string
	binds []string // host dirs bound read-only at the same path
}

// buildRootfs creates the skeleton under dir (0755, owned by root).
func buildRootfs(dir string) (*rootfs, error) {
	r := &rootfs{dir: dir, binds: []string{"/usr"}}
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	for _, d := range skeletonDirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	for _, d := range systemDirs {
		host := "/" + d
		fi, err := os.Lstat(host)
		switch {
		case os.IsNotExist(err):
			continue
		case err != nil:
			return nil, err
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return nil, err
			}
			if filepath.IsAbs(target) || !strings.HasPrefix(filepath.Clean(target), "usr/") {
				return nil, fmt.Errorf("native: %s links to %s, outside /usr", host, target)
			}
			if err := os.Symlink(target, filepath.Join(dir, d)); err != nil {
				return nil, err
			}
		case fi.IsDir():
			if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
				return nil, err
			}
			r.binds = append(r.binds, host)
		}
	}
	for name, content := range etcFiles {
		if err := os.WriteFile(filepath.Join(dir, "etc", name), []byte(content), 0o644); err != nil {
			return nil, err
		}
	}
	// The loader cache only lists host library paths; it saves the dynamic
	// loader a directory search per library at each start.
	if err := copyFile("/etc/ld.so.cache", filepath.Join(dir, "etc", "ld.so.cache"), 0o644); err != nil && !os.IsNotExist(err) {
		return nil, err
	}
	return r, nil
}

// writeGuestFiles copies the top level of files into dir (read-only files).
func writeGuestFiles(files fs.FS, dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return err
	}
	found := false
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o444); err != nil {
			return err
		}
		found = found || e.Name() == "apysup_runner.py"
	}
	if !found {
		return fmt.Errorf("native: guest files lack apysup_runner.py")
	}
	precompile(dir)
	return nil
}

// precompile writes __pycache__ next to the guest files once, so that no
// run compiles the guest modules again (guests run with
// PYTHONDONTWRITEBYTECODE=1 on a read-only mount: they read pycs but never
// write them). unchecked-hash pycs are not even compared with their source,
// which cannot change under a Backend. A failure only costs speed (a host
// without Python is refused by the doctor before any run).
func precompile(dir string) {
	cmd := exec.Command(doctor.PythonPath, "-I", "-S", "-m", "compileall", "-q",
		"--invalidation-mode", "unchecked-hash", dir)
	cmd.Env = []string{}
	_ = cmd.Run()
}

func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
