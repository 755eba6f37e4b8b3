//go:build linux

package wazero

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// stampedBuild is a one-file build in a temporary directory, with the
// directory for its stamps.
func stampedBuild(t *testing.T, content string) (b *Build, stampDir string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, wasmFile), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	b = &Build{Dir: dir, Manifest: Manifest{Key: "k", Files: map[string]ManifestFile{
		wasmFile: {Size: int64(len(content)), SHA256: hex.EncodeToString(sum[:])},
	}}}
	return b, filepath.Join(t.TempDir(), "verified")
}

// readAsLoad reads the build's file as Load does, as if an hour from now (past
// racyWindow), and saves what it stamped.
func (b *Build) readAsLoad(stampDir string) ([]byte, error) {
	st := openStamps(stampDir, b.Manifest.Key)
	data, err := b.readStamped(wasmFile, st, time.Now().Add(time.Hour))
	st.save()
	return data, err
}

func TestStampSkipsOnlyTheHashOfTheSameFile(t *testing.T) {
	b, stampDir := stampedBuild(t, "good bytes")
	if data, err := b.readAsLoad(stampDir); err != nil || string(data) != "good bytes" {
		t.Fatalf("first read: %q %v", data, err)
	}
	fi, err := os.Stat(filepath.Join(stampDir, "k.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("stamp file: %v %v", fi, err)
	}
	// A stamp is trusted: a manifest digest the stamp vouches for is
	// not recomputed (it would not match), for the same file.
	file := filepath.Join(b.Dir, wasmFile)
	st := openStamps(stampDir, "k")
	want := b.Manifest.Files[wasmFile]
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	id, ok := identify(f)
	f.Close()
	if !ok || !st.verified(wasmFile, want.SHA256, id) {
		t.Fatalf("no stamp for %+v in %+v", id, st.doc)
	}
	// The same bytes under another inode (a file replaced by rename, as
	// a damaged copy would be) are another file: hashed again, and a
	// changed byte is refused.
	for _, content := range []string{"good bytes", "evil bytes"} {
		tmp := file + ".new"
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, file); err != nil {
			t.Fatal(err)
		}
		data, err := b.readAsLoad(stampDir)
		var u *UnavailableError
		switch {
		case content == "good bytes" && (err != nil || string(data) != content):
			t.Fatalf("replaced by the same bytes: %q %v", data, err)
		case content == "evil bytes" && (!errors.As(err, &u) || u.Code != ErrorCodeGuestMissing):
			t.Fatalf("replaced by other bytes: %q %v, want %s", data, err, ErrorCodeGuestMissing)
		}
	}
}

// A stamp another user could have written is ignored.
func TestStampOthersCanWriteIsIgnored(t *testing.T) {
	b, stampDir := stampedBuild(t, "good bytes")
	if _, err := b.readAsLoad(stampDir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(stampDir, "k.json")
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if st := openStamps(stampDir, "k"); len(st.doc.Files) != 0 {
		t.Fatalf("a world-writable stamp file was read: %+v", st.doc)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if st := openStamps(stampDir, "other key"); len(st.doc.Files) != 0 {
		t.Fatalf("another build's stamps were read: %+v", st.doc)
	}
}

// A file changed within racyWindow is not stamped: a second write in the
// same clock tick would keep its ctime.
func TestStampRacyFileIsNotStamped(t *testing.T) {
	b, stampDir := stampedBuild(t, "good bytes")
	st := openStamps(stampDir, "k")
	if _, err := b.readStamped(wasmFile, st, time.Now()); err != nil {
		t.Fatal(err)
	}
	st.save()
	if _, err := os.Stat(filepath.Join(stampDir, "k.json")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file written just now was stamped: %v", err)
	}
}

// The stamp says which code a Load compiled: for a guarded memory or with
// bounds checks, two entries of the compilation cache. A Load that needs
// the other finds none recorded, and compiles it.
func TestStampRecordsWhichCodeWasCompiled(t *testing.T) {
	dir := t.TempDir()
	st := openStamps(dir, "k")
	st.recordCompiled(1<<20, true)
	st.save()
	st = openStamps(dir, "k")
	if got := st.compiledMinMemory(true); got != 1<<20 {
		t.Fatalf("guarded: %d", got)
	}
	if got := st.compiledMinMemory(false); got != 0 {
		t.Fatalf("with checks: %d, want none", got)
	}
	st.recordCompiled(1<<20, false)
	if got := st.compiledMinMemory(true); got != 0 || !st.dirty {
		t.Fatalf("guarded after a compile with checks: %d (dirty %v)", got, st.dirty)
	}
}
