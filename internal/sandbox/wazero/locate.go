package wazero

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apysup/apysup/python/wasi"
)

// ErrorCodeGuestMissing is the typed reason when no WASI build matches the
// embedded build inputs (SPEC.md section 10).
const ErrorCodeGuestMissing = "wasi_guest_missing"

// BuildCommand is the one command that produces the WASI build.
const BuildCommand = "make wasi-python"

// UnavailableError says why the backend cannot run at all. Code is a stable
// error_code; the backend never falls back to weaker confinement.
type UnavailableError struct {
	Code   string
	Reason string
}

func (e *UnavailableError) Error() string { return e.Code + ": " + e.Reason }

// ErrorCode is the error's stable code.
func (e *UnavailableError) ErrorCode() string { return e.Code }

// Build is one finished WASI build in the cache.
type Build struct {
	Dir      string
	Manifest Manifest
}

// Manifest is build.sh's manifest.json.
type Manifest struct {
	SchemaVersion string                  `json:"schema_version"`
	Key           string                  `json:"key"`
	PythonVersion string                  `json:"python_version"`
	Source        map[string]string       `json:"source"`
	Toolchain     map[string]string       `json:"toolchain"`
	Files         map[string]ManifestFile `json:"files"`
}

// ManifestFile is the size and digest of one build output.
type ManifestFile struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

const (
	wasmFile   = "python.wasm"
	stdlibFile = "python311.zip"
)

// BuildKey is the cache key of the build whose inputs are in inputs. It
// mirrors build.sh: the sha256 of the `sha256sum` lines ("<hex>  <path>\n")
// of every input file, paths sorted bytewise. Computing it here (rather
// than running `build.sh --print-dir`) keeps the binary independent of the
// source tree and of a shell at run time; a test holds the two equal.
func BuildKey(inputs fs.FS) (string, error) {
	var paths []string
	err := fs.WalkDir(inputs, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		paths = append(paths, p)
		return nil
	})
	if err != nil {
		return "", err
	}
	sort.Strings(paths)
	var list strings.Builder
	for _, p := range paths {
		data, err := fs.ReadFile(inputs, p)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&list, "%x  %s\n", sum, p)
	}
	sum := sha256.Sum256([]byte(list.String()))
	return hex.EncodeToString(sum[:]), nil
}

// embeddedKey is the BuildKey of the inputs compiled into this binary,
// hashed once per process.
var embeddedKey = sync.OnceValues(func() (string, error) { return BuildKey(wasi.Inputs) })

// DefaultCacheDir is where build.sh writes: ${XDG_CACHE_HOME:-$HOME/.cache}.
func DefaultCacheDir() (string, error) {
	if dir := os.Getenv("XDG_CACHE_HOME"); dir != "" {
		return dir, nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".cache"), nil
}

// Locate finds the WASI build of the embedded inputs under cacheDir (the
// directory holding apysup/, "" for DefaultCacheDir). A missing or
// unreadable build is an *UnavailableError with ErrorCodeGuestMissing.
func Locate(cacheDir string) (*Build, error) {
	if cacheDir == "" {
		var err error
		if cacheDir, err = DefaultCacheDir(); err != nil {
			return nil, missing("no cache directory: " + err.Error())
		}
	}
	key, err := embeddedKey()
	if err != nil {
		return nil, fmt.Errorf("wazero: build key: %w", err)
	}
	dir := filepath.Join(cacheDir, "apysup", "wasi", key)
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missing("no WASI CPython build at " + dir)
	}
	if err != nil {
		return nil, missing(err.Error())
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, missing("unreadable " + filepath.Join(dir, "manifest.json") + ": " + err.Error())
	}
	if m.Key != key {
		return nil, missing(fmt.Sprintf("%s names key %q, want %q", filepath.Join(dir, "manifest.json"), m.Key, key))
	}
	for _, name := range []string{wasmFile, stdlibFile} {
		if _, ok := m.Files[name]; !ok {
			return nil, missing("manifest.json lists no " + name)
		}
	}
	return &Build{Dir: dir, Manifest: m}, nil
}

// ReadFile reads one build output and checks it against the manifest.
func (b *Build) ReadFile(name string) ([]byte, error) {
	return b.readStamped(name, nil, time.Time{})
}

// readStamped is ReadFile that skips the hash when st holds a stamp of the
// very file read (stamp.go), and stamps a file it hashed.
func (b *Build) readStamped(name string, st *stamps, now time.Time) ([]byte, error) {
	f, data, err := b.openStamped(name, st, now)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if data != nil {
		return data, nil
	}
	return b.readOpened(f, name, st)
}

// readOpened reads the build output f, which openStamped opened on a
// stamp's word: a file changed since is hashed after all.
func (b *Build) readOpened(f *os.File, name string, st *stamps) ([]byte, error) {
	want := b.Manifest.Files[name]
	data := make([]byte, want.Size)
	if _, err := f.ReadAt(data, 0); err != nil {
		return nil, missing(f.Name() + ": " + err.Error())
	}
	if id, ok := identify(f); !ok || !st.verified(name, want.SHA256, id) {
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != want.SHA256 {
			return nil, missing(f.Name() + " does not match manifest.json")
		}
	}
	return data, nil
}

// openStamped opens one build output, checked against the manifest, and
// returns it open: when st vouches for the file opened, nothing read yet
// (data nil); otherwise with its bytes, read and hashed (and stamped). The
// caller closes f.
func (b *Build) openStamped(name string, st *stamps, now time.Time) (f *os.File, data []byte, err error) {
	want, ok := b.Manifest.Files[name]
	if !ok {
		return nil, nil, missing("manifest.json lists no " + name)
	}
	file := filepath.Join(b.Dir, name)
	if f, err = os.Open(file); err != nil {
		return nil, nil, missing(err.Error())
	}
	before, known := identify(f)
	if known && before.Size == want.Size && st.verified(name, want.SHA256, before) {
		return f, nil, nil
	}
	fail := func(why string) (*os.File, []byte, error) {
		f.Close()
		return nil, nil, missing(why)
	}
	fi, err := f.Stat()
	if err != nil {
		return fail(err.Error())
	}
	if fi.Size() != want.Size {
		return fail(file + " does not match manifest.json")
	}
	data = make([]byte, want.Size)
	if _, err := io.ReadFull(f, data); err != nil {
		return fail(file + ": " + err.Error())
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != want.SHA256 {
		return fail(file + " does not match manifest.json")
	}
	// The identity after the read, equal to the one before: the bytes
	// hashed are that one version's.
	if after, _ := identify(f); known && after == before {
		st.record(name, want.SHA256, before, now)
	}
	return f, data, nil
}

// sha256Digest decodes a manifest's digest: 64 lowercase hex digits.
func sha256Digest(s string) (sum [sha256.Size]byte, ok bool) {
	if len(s) != hex.EncodedLen(sha256.Size) || strings.ToLower(s) != s {
		return sum, false
	}
	_, err := hex.Decode(sum[:], []byte(s))
	return sum, err == nil
}

func missing(why string) error {
	return &UnavailableError{Code: ErrorCodeGuestMissing, Reason: why + "; run `" + BuildCommand + "` once to build it"}
}
