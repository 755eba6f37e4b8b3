package native

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// The skeleton root and the guest files (with their compiled bytecode) are
// the same for every run and every supervisor process on a host until their
// inputs change, and building them costs a Python process (compileall): a
// one-shot `apysup run` must not pay that each time. They live in a cache
// directory under a name derived from a digest of their inputs, built once
// and renamed into place atomically; nothing in it is ever modified.

// defaultCacheDir is root's /var/cache when writable, else the temp dir.
func defaultCacheDir() string {
	if unix.Access("/var/cache", unix.W_OK) == nil {
		return "/var/cache/apysup-native"
	}
	return filepath.Join(os.TempDir(), "apysup-native-cache")
}

// openCache makes sure dir exists, is this process's and is writable by no
// one else (a guest's files come from it). 0711: the runs' container root
// must traverse it.
func openCache(dir string) error {
	if err := os.MkdirAll(dir, 0o711); err != nil {
		return err
	}
	return ownedPrivately(dir)
}

// cachedTree returns cache/<kind>-<digest>, building it with build (which
// must create the directory it is given) when it is not there yet.
// Concurrent builders race harmlessly: the first rename wins.
func cachedTree(cache, kind string, key []byte, build func(dir string) error) (string, error) {
	sum := sha256.Sum256(key)
	final := filepath.Join(cache, kind+"-"+hex.EncodeToString(sum[:8]))
	if fi, err := os.Lstat(final); err == nil && fi.IsDir() {
		return final, nil
	}
	tmp, err := os.MkdirTemp(cache, ".build-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tree := filepath.Join(tmp, "tree")
	if err := build(tree); err != nil {
		return "", err
	}
	if err := os.Rename(tree, final); err != nil {
		// Another process got there first (ENOTEMPTY/EEXIST): use its tree.
		if fi, serr := os.Lstat(final); serr == nil && fi.IsDir() {
			return final, nil
		}
		return "", err
	}
	return final, nil
}

// guestFilesKey digests the guest files and the interpreter that compiles them.
func guestFilesKey(files fs.FS) ([]byte, error) {
	h := sha256.New()
	fmt.Fprintf(h, "guest-v1\x00")
	entries, err := fs.ReadDir(files, ".")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		b, err := fs.ReadFile(files, e.Name())
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(h, "%s\x00%d\x00", e.Name(), len(b))
		h.Write(b)
	}
	var st unix.Stat_t
	if err := unix.Stat(pythonPath, &st); err != nil && !errors.Is(err, unix.ENOENT) {
		return nil, err
	}
	fmt.Fprintf(h, "python\x00%d\x00%d.%d", st.Size, st.Mtim.Sec, st.Mtim.Nsec)
	return h.Sum(nil), nil
}
