package sandbox

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/canonjson"
)

// Workspace limits: a snapshot refuses trees beyond them.
const (
	MaxWorkspaceEntries = 100_000
	MaxWorkspaceBytes   = 4 << 30
)

// Stable codes of workspace handling.
const (
	CodeWorkspaceTooLarge     = "workspace_too_large"
	CodeWorkspaceUnexportable = "workspace_unexportable"
	CodeWorkspaceTargetExists = "workspace_target_exists"
	CodeWorkspaceChanged      = "workspace_changed"
	CodeWorkspaceInputInvalid = "workspace_input_invalid"
)

// WorkspaceError is a typed workspace refusal.
type WorkspaceError struct {
	Code   string
	Path   string
	Detail string
}

// ErrorCode is the error's stable code.
func (e *WorkspaceError) ErrorCode() string { return e.Code }

func (e *WorkspaceError) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: %s: %s", e.Code, e.Path, e.Detail)
	}
	return e.Code + ": " + e.Detail
}

// Entry is one node of a workspace tree. Symlinks are recorded (their
// target digested) but never followed.
type Entry struct {
	Path   string `json:"path"` // slash-separated, relative
	Type   string `json:"type"` // file, dir, symlink, other
	Mode   uint32 `json:"mode"` // permission bits
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256,omitempty"` // content (file) or target (symlink)
}

// Tree is a snapshot of a workspace.
type Tree struct {
	Entries []Entry
	Bytes   int64
}

// Digest is the domain-separated digest of the sorted entries.
func (t Tree) Digest() string {
	entries := t.Entries
	if entries == nil {
		entries = []Entry{}
	}
	return canonjson.Digest(canonjson.DomainWorkspaceTree, canonjson.MustMarshal(entries))
}

// Snapshot walks dir without following symlinks and returns its entries
// sorted by path, within the default bounds.
func Snapshot(dir string) (Tree, error) {
	return SnapshotWithin(dir, MaxWorkspaceBytes, MaxWorkspaceEntries)
}

// SnapshotWithin is Snapshot with explicit bounds: it stops with
// workspace_too_large before hashing more than maxBytes of file contents
// (apparent sizes, so a sparse file cannot make the host hash gigabytes of
// holes) or listing more than maxEntries entries, and with
// workspace_unexportable at a name that is not UTF-8 (no entry could name
// it exactly).
func SnapshotWithin(dir string, maxBytes int64, maxEntries int) (Tree, error) {
	var t Tree
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		// A guest can build a tree deeper than any path reaches: say so
		// (briefly: never the path itself) before the host trips on it.
		if len(path) >= unix.PathMax || errors.Is(err, unix.ENAMETOOLONG) {
			return &WorkspaceError{Code: CodeWorkspaceTooLarge, Detail: fmt.Sprintf("a path longer than the host's PATH_MAX (%d bytes)", unix.PathMax)}
		}
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		if len(t.Entries) >= maxEntries {
			return &WorkspaceError{Code: CodeWorkspaceTooLarge, Detail: fmt.Sprintf("more than %d entries", maxEntries)}
		}
		rel, _ := filepath.Rel(dir, path)
		// Entry paths are JSON strings: a name that is not UTF-8 would be
		// written with U+FFFD in place of its bytes, and two different
		// trees would share one digest. The guest can make such a name
		// natively; the tree cannot be named, so it is not exported.
		if !utf8.ValidString(d.Name()) {
			return &WorkspaceError{Code: CodeWorkspaceUnexportable, Detail: "a name that is not valid UTF-8"}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		e := Entry{Path: filepath.ToSlash(rel), Mode: uint32(info.Mode().Perm())}
		switch {
		case info.Mode().IsRegular():
			e.Type, e.Size = "file", info.Size()
			if t.Bytes += e.Size; t.Bytes > maxBytes {
				return &WorkspaceError{Code: CodeWorkspaceTooLarge, Detail: fmt.Sprintf("more than %d bytes", maxBytes)}
			}
			if e.SHA256, err = fileDigest(path); err != nil {
				return err
			}
		case info.IsDir():
			e.Type = "dir"
		case info.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			e.Type, e.SHA256 = "symlink", canonjson.PlainDigest([]byte(target))
		default:
			e.Type = "other"
		}
		t.Entries = append(t.Entries, e)
		return nil
	})
	if err != nil {
		return Tree{}, err
	}
	sort.Slice(t.Entries, func(i, j int) bool { return t.Entries[i].Path < t.Entries[j].Path })
	return t, nil
}

func fileDigest(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

// CopyTree copies a host directory into dst (which must exist): regular
// files and directories only, named in UTF-8. Anything else is refused, so
// a workspace never starts with a link out of it, nor with a name its
// snapshot could not record. Each copy gets exactly the
// permission bits of its source (no set-ID or sticky bit), whatever the
// process's umask: seeding and export both reproduce the modes a snapshot
// records. A directory gets its mode after its contents, so that a
// read-only one can still be filled.
func CopyTree(src, dst string) error {
	type dirMode struct {
		path string
		perm fs.FileMode
	}
	var dirs []dirMode
	// The root is what the caller named: a link to a directory is
	// followed (the tree below it is walked as ever, where a link is
	// refused), and anything but a directory is refused. WalkDir would
	// have walked neither, and the run gone on with an empty workspace.
	root, err := filepath.EvalSymlinks(src)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &WorkspaceError{Code: CodeWorkspaceInputInvalid, Detail: "the workspace does not exist"}
	case err != nil:
		return &WorkspaceError{Code: CodeWorkspaceInputInvalid, Detail: "the workspace cannot be read"}
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return &WorkspaceError{Code: CodeWorkspaceInputInvalid, Detail: "the workspace is not a directory"}
	}
	src = root
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if rel == "." {
			return nil
		}
		if !utf8.ValidString(d.Name()) {
			return &WorkspaceError{Code: CodeWorkspaceInputInvalid, Detail: "a workspace path is not UTF-8"}
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case info.IsDir():
			dirs = append(dirs, dirMode{target, info.Mode().Perm()})
			return os.Mkdir(target, 0o700)
		case info.Mode().IsRegular():
			return copyFile(path, target, info.Mode().Perm())
		}
		return &WorkspaceError{Code: CodeWorkspaceInputInvalid, Path: filepath.ToSlash(rel), Detail: "only regular files and directories can seed a workspace"}
	})
	if err != nil {
		return err
	}
	for i := len(dirs) - 1; i >= 0; i-- { // children before their parents
		if err := os.Chmod(dirs[i].path, dirs[i].perm); err != nil {
			return err
		}
	}
	return nil
}

// CheckPlainTree refuses a tree holding anything but regular files and
// directories (workspace_input_invalid), without following symlinks: the
// rule a seeded workspace meets by construction, for callers that bring a
// directory of their own.
func CheckPlainTree(dir string) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		return &WorkspaceError{Code: CodeWorkspaceInputInvalid, Path: filepath.ToSlash(rel), Detail: "a workspace holds only regular files and directories"}
	})
}

// copyFile copies src to a new file dst with exactly the permission bits
// perm (fchmod: the umask does not apply).
func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.OpenFile(src, os.O_RDONLY|unix.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(perm)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// Export publishes the workspace dir as target: it is staged into a
// temporary directory beside target, re-checked against want (the final
// tree), and renamed into place atomically. target must not exist. A tree
// holding anything but files and directories is refused.
func Export(dir, target string, want Tree) error {
	for _, e := range want.Entries {
		if e.Type != "file" && e.Type != "dir" {
			return &WorkspaceError{Code: CodeWorkspaceUnexportable, Path: e.Path, Detail: "only regular files and directories are exported (found " + e.Type + ")"}
		}
	}
	target = filepath.Clean(target)
	if _, err := os.Lstat(target); err == nil {
		return &WorkspaceError{Code: CodeWorkspaceTargetExists, Path: target, Detail: "the export target exists; apysup never overwrites"}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	stage, err := os.MkdirTemp(filepath.Dir(target), "."+filepath.Base(target)+".apysup-stage-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(stage) // a no-op after the rename
	if err := CopyTree(dir, stage); err != nil {
		return err
	}
	// Bounded by the final snapshot: a staged copy that grew is a change.
	got, err := SnapshotWithin(stage, want.Bytes, len(want.Entries))
	var we *WorkspaceError
	if errors.As(err, &we) && we.Code == CodeWorkspaceTooLarge {
		return &WorkspaceError{Code: CodeWorkspaceChanged, Detail: "the staged copy is larger than the final snapshot"}
	}
	if err != nil {
		return err
	}
	if got.Digest() != want.Digest() {
		return &WorkspaceError{Code: CodeWorkspaceChanged, Detail: "the staged copy differs from the final snapshot"}
	}
	if err := os.Chmod(stage, 0o755); err != nil {
		return err
	}
	// Never replace a target that appeared meanwhile.
	if err := renameNoReplace(stage, target); err != nil {
		if errors.Is(err, unix.EEXIST) {
			return &WorkspaceError{Code: CodeWorkspaceTargetExists, Path: target, Detail: "the export target appeared during export"}
		}
		return fmt.Errorf("export rename: %w", err)
	}
	return nil
}

// WorkspaceReceipt binds what happened to a run's workspace (SPEC.md
// section 10). ReceiptID is the digest of the receipt without itself.
type WorkspaceReceipt struct {
	SchemaVersion     string `json:"schema_version"`
	ReceiptID         string `json:"receipt_id,omitempty"`
	RunID             string `json:"run_id"`
	PlanSHA256        string `json:"plan_sha256"`
	RequestSHA256     string `json:"request_sha256"`
	InitialTreeSHA256 string `json:"initial_tree_sha256"`
	FinalTreeSHA256   string `json:"final_tree_sha256"`
	Policy            string `json:"policy"`      // export | discard
	Disposition       string `json:"disposition"` // exported | discarded
	ErrorCode         string `json:"error_code,omitempty"`
	EntryCount        int    `json:"entry_count"`
	Bytes             int64  `json:"bytes"`
}

// WorkspaceReceiptSchema tags workspace receipts.
const WorkspaceReceiptSchema = "apysup.workspace.v1"

// Seal sets ReceiptID.
func (w *WorkspaceReceipt) Seal() {
	w.SchemaVersion = WorkspaceReceiptSchema
	w.ReceiptID = ""
	w.ReceiptID = canonjson.Digest(canonjson.DomainWorkspace, canonjson.MustMarshal(w))
}

// Verify recomputes ReceiptID.
func (w WorkspaceReceipt) Verify() bool {
	id := w.ReceiptID
	w.ReceiptID = ""
	return id != "" && canonjson.Digest(canonjson.DomainWorkspace, canonjson.MustMarshal(w)) == id
}
