package native

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/doctor"
)

// pythonPath is the interpreter of every guest (and of precompile).
const pythonPath = doctor.PythonPath

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

// The generated /etc (sandbox.EtcFiles): no host configuration reaches a
// guest.
var etcFiles = sandbox.EtcFiles()

// hostAlternatives reads Debian's /etc/alternatives: /usr/bin/awk, which,
// editor and the like are links into it, and they must resolve in the
// guest as on the host. Only links to files under /usr (or the system
// directories merged into it) are kept; a link elsewhere would dangle.
func hostAlternatives() (map[string]string, error) {
	entries, err := os.ReadDir("/etc/alternatives")
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	alts := map[string]string{}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := os.Readlink(filepath.Join("/etc/alternatives", e.Name()))
		if err != nil {
			return nil, err
		}
		if !filepath.IsAbs(target) || filepath.Clean(target) != target {
			continue
		}
		top, _, _ := strings.Cut(strings.TrimPrefix(target, "/"), "/")
		if top == "usr" || slices.Contains(systemDirs, top) {
			alts[e.Name()] = target
		}
	}
	return alts, nil
}

// rootfs is the shared, read-only skeleton root of every run.
type rootfs struct {
	dir   string
	binds []string // host dirs bound read-only at the same path
}

// rootLayout is how the host lays out its top-level system directories.
type rootLayout struct {
	links        map[string]string // name -> relative target inside /usr
	binds        []string          // host dirs bound read-only at the same path
	alternatives map[string]string // /etc/alternatives: name -> absolute target
}

// hostLayout reads the layout: /usr always bound; bin, lib, ... recreated
// as symlinks where the host has merged /usr, bound otherwise.
func hostLayout() (rootLayout, error) {
	l := rootLayout{links: map[string]string{}, binds: []string{"/usr"}}
	for _, d := range systemDirs {
		host := "/" + d
		fi, err := os.Lstat(host)
		switch {
		case os.IsNotExist(err):
			continue
		case err != nil:
			return l, err
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(host)
			if err != nil {
				return l, err
			}
			if filepath.IsAbs(target) || !strings.HasPrefix(filepath.Clean(target), "usr/") {
				return l, fmt.Errorf("native: %s links to %s, outside /usr", host, target)
			}
			l.links[d] = target
		case fi.IsDir():
			l.binds = append(l.binds, host)
		}
	}
	var err error
	l.alternatives, err = hostAlternatives()
	return l, err
}

// key digests everything the skeleton is built from.
func (l rootLayout) key(ldCache []byte) []byte {
	var b strings.Builder
	b.WriteString("rootfs-v2\x00")
	for _, d := range systemDirs {
		fmt.Fprintf(&b, "%s=%s;", d, l.links[d])
	}
	fmt.Fprintf(&b, "%q", l.binds)
	for _, name := range slices.Sorted(maps.Keys(etcFiles)) {
		fmt.Fprintf(&b, "%s\x00%s\x00", name, etcFiles[name])
	}
	for _, name := range slices.Sorted(maps.Keys(l.alternatives)) {
		fmt.Fprintf(&b, "alt:%s\x00%s\x00", name, l.alternatives[name])
	}
	b.Write(ldCache)
	return []byte(b.String())
}

// buildRootfs creates the skeleton at dir (0755, owned by root).
func buildRootfs(dir string, l rootLayout, ldCache []byte) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return err
	}
	for _, d := range skeletonDirs {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return err
		}
	}
	for name, target := range l.links {
		if err := os.Symlink(target, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	for _, host := range l.binds[1:] {
		if err := os.Mkdir(filepath.Join(dir, host), 0o755); err != nil {
			return err
		}
	}
	for name, content := range etcFiles {
		p := filepath.Join(dir, "etc", name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	if len(l.alternatives) > 0 {
		if err := os.Mkdir(filepath.Join(dir, "etc", "alternatives"), 0o755); err != nil {
			return err
		}
		for name, target := range l.alternatives {
			if err := os.Symlink(target, filepath.Join(dir, "etc", "alternatives", name)); err != nil {
				return err
			}
		}
	}
	// The loader cache only lists host library paths; it saves the dynamic
	// loader a directory search per library at each start. It is part of the
	// key, so a host whose libraries change gets a fresh skeleton.
	if ldCache != nil {
		return os.WriteFile(filepath.Join(dir, "etc", "ld.so.cache"), ldCache, 0o644)
	}
	return nil
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
	cmd := exec.Command(pythonPath, "-I", "-S", "-m", "compileall", "-q",
		"--invalidation-mode", "unchecked-hash", dir)
	cmd.Env = []string{}
	_ = cmd.Run()
}
