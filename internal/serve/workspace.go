package serve

import (
	"archive/tar"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"

	"github.com/apysup/apysup/internal/sandbox"
)

// A run's workspace arrives as a file map or as a tar archive; both become
// a seed, checked as one: hostile input, written by the server into a new
// directory that the supervisor then copies into the sandbox's workspace
// within the run's limits.

// Bounds of a run's workspace seed, whichever form it takes.
const (
	// MaxWorkspaceFiles bounds the entries: the files of a file map, the
	// files and directories of a tar.
	MaxWorkspaceFiles = 1024
	// MaxWorkspaceBytes bounds the content of all files (a tar's sparse
	// files count at their full size).
	MaxWorkspaceBytes = MaxRequestBytes
)

// seedEntry is one entry of a checked workspace seed.
type seedEntry struct {
	path string      // clean, relative, slash-separated (validWorkspacePath)
	dir  bool        // a directory; else a regular file
	perm fs.FileMode // permission bits, masked (seedPerm)
	data []byte
}

// seed collects a workspace's entries and refuses, as it goes, everything
// that could make one entry land anywhere but where its path says, or two
// entries land on one file: a path that is not clean and relative, one
// given twice, two that differ only in case or Unicode normalisation (one
// file on a case-insensitive or normalising file system, to which a
// workspace may be exported), a file under another file.
type seed struct {
	entries []seedEntry
	bytes   int64
	kinds   map[string]seedKind // every path, the implied directories included
	folded  map[string]string   // the folded form of each path in kinds -> the path
}

type seedKind int8

const (
	seedImplied seedKind = iota + 1 // a directory of another entry, not an entry itself
	seedDir
	seedFile
)

func newSeed() *seed {
	return &seed{kinds: map[string]seedKind{}, folded: map[string]string{}}
}

func invalidSeed(format string, args ...any) *Error {
	return refusal(sandbox.CodeWorkspaceInputInvalid, format, args...)
}

// add checks and records one entry, whose path its caller has stripped of
// its form's own decorations only (a tar's "./" and a directory's "/").
// The entry's data is kept, not copied.
func (s *seed) add(e seedEntry) error {
	if len(s.entries) >= MaxWorkspaceFiles {
		return refusal(sandbox.CodeWorkspaceTooLarge, "more than %d workspace entries", MaxWorkspaceFiles)
	}
	if s.bytes += int64(len(e.data)); s.bytes > MaxWorkspaceBytes {
		return refusal(sandbox.CodeWorkspaceTooLarge, "more than %d bytes of workspace files", MaxWorkspaceBytes)
	}
	if !validWorkspacePath(e.path) {
		return invalidSeed("a workspace path is not a clean relative path")
	}
	kind := seedFile
	if e.dir {
		kind = seedDir
	}
	// A directory may be named after an entry below it implied it.
	if k, seen := s.kinds[e.path]; seen && !(k == seedImplied && kind == seedDir) {
		return invalidSeed("a workspace path is given twice, or both as a file and a directory")
	}
	for dir := path.Dir(e.path); dir != "."; dir = path.Dir(dir) {
		if s.kinds[dir] == seedFile {
			return invalidSeed("a workspace path is both a file and a directory")
		}
	}
	for p := e.path; p != "."; p = path.Dir(p) {
		key := foldPath(p)
		if other, ok := s.folded[key]; ok && other != p {
			return invalidSeed("two workspace paths differ only in case or Unicode normalisation")
		}
		s.folded[key] = p
		if p == e.path {
			s.kinds[p] = kind
		} else if s.kinds[p] == 0 {
			s.kinds[p] = seedImplied
		}
	}
	e.perm = seedPerm(e.perm, e.dir)
	s.entries = append(s.entries, e)
	return nil
}

// foldPath is the form two paths share when a case-insensitive or
// normalising file system would take them for one.
func foldPath(p string) string {
	return cases.Fold().String(norm.NFC.String(p))
}

// seedPerm masks an entry's permission bits: no set-id or sticky bit, no
// write for group or others, and always readable and writable (directories
// also searchable) by the guest, who owns the workspace.
func seedPerm(perm fs.FileMode, dir bool) fs.FileMode {
	perm = perm.Perm() & 0o755
	if dir {
		return perm | 0o700
	}
	return perm | 0o600
}

// seedFromMap checks a file map (regular files, mode 0600).
func seedFromMap(files map[string][]byte) (*seed, error) {
	s := newSeed()
	if len(files) > MaxWorkspaceFiles {
		return nil, refusal(sandbox.CodeWorkspaceTooLarge, "more than %d workspace files", MaxWorkspaceFiles)
	}
	for p, data := range files {
		if err := s.add(seedEntry{path: p, perm: 0o600, data: data}); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// CodeWorkspaceTarInvalid refuses a workspace_tar that is not a readable,
// complete, uncompressed tar archive (400).
const CodeWorkspaceTarInvalid = "workspace_tar_invalid"

// seedFromTar checks an uncompressed tar archive (ustar, PAX or GNU): only
// regular files and directories, each named by a relative path (a leading
// "./" and a directory's trailing "/" are allowed), with their permission
// bits masked (seedPerm); owners, times, extended attributes and every
// other header field are ignored. Links, devices, FIFOs and every other
// kind of entry are refused, as is an archive that is truncated or holds
// anything but zero blocks after its end.
func seedFromTar(archive []byte) (*seed, error) {
	s := newSeed()
	r := bytes.NewReader(archive)
	tr := tar.NewReader(r)
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, refusal(CodeWorkspaceTarInvalid, "workspace_tar is not a readable tar archive")
		}
		var dir bool
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			dir = true
		case tar.TypeXGlobalHeader:
			continue // PAX records for the whole archive (git archive writes one): nothing applies
		default:
			return nil, invalidSeed("a workspace holds only regular files and directories (tar entry type %q)", typeName(hdr.Typeflag))
		}
		name := hdr.Name
		if !utf8.ValidString(name) {
			return nil, invalidSeed("a workspace path is not UTF-8")
		}
		name = strings.TrimPrefix(name, "./")
		if dir {
			name = strings.TrimSuffix(name, "/")
			if name == "" || name == "." {
				continue // the archive's own root
			}
		}
		var data []byte
		if !dir {
			if hdr.Size > MaxWorkspaceBytes-s.bytes {
				return nil, refusal(sandbox.CodeWorkspaceTooLarge, "more than %d bytes of workspace files", MaxWorkspaceBytes)
			}
			data = make([]byte, hdr.Size) // the reader refuses a negative size
			if _, err := io.ReadFull(tr, data); err != nil {
				return nil, refusal(CodeWorkspaceTarInvalid, "workspace_tar is truncated")
			}
		}
		if err := s.add(seedEntry{path: name, dir: dir, perm: fs.FileMode(hdr.Mode & 0o7777), data: data}); err != nil {
			return nil, err
		}
	}
	// Past the end-of-archive blocks only zeros (the padding tar writes up
	// to its record size) may follow: anything else is a second archive or
	// garbage that another reader might take for entries.
	rest, _ := io.ReadAll(r)
	if bytes.ContainsFunc(rest, func(c rune) bool { return c != 0 }) {
		return nil, refusal(CodeWorkspaceTarInvalid, "workspace_tar holds data after its end")
	}
	return s, nil
}

// typeName names a tar entry type for a refusal.
func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symlink"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "fifo"
	case tar.TypeGNUSparse:
		return "sparse"
	}
	if t >= 0x20 && t < 0x7f {
		return string(rune(t))
	}
	return fmt.Sprintf("0x%02x", t)
}

// write writes the seed into a new directory dir: the run's workspace
// seed, which the supervisor copies into the sandbox's workspace within
// its limits.
func (s *seed) write(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	for _, e := range s.entries {
		full := filepath.Join(dir, filepath.FromSlash(e.path))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return err
		}
		if e.dir {
			// Mkdir fails on an implied directory made already.
			if err := os.Mkdir(full, e.perm); err != nil && !errors.Is(err, fs.ErrExist) {
				return err
			}
			if err := os.Chmod(full, e.perm); err != nil {
				return err
			}
			continue
		}
		// O_EXCL: the checks make every path distinct; nothing is
		// followed or overwritten.
		f, err := os.OpenFile(full, os.O_WRONLY|os.O_CREATE|os.O_EXCL, e.perm)
		if err != nil {
			return err
		}
		_, werr := f.Write(e.data)
		if err := errors.Join(werr, f.Close(), os.Chmod(full, e.perm)); err != nil {
			return err
		}
	}
	return nil
}

// workspaceSelected is the workspace choice as a run's config lists it:
// how many files it seeds (nil: none).
func workspaceSelected(s *seed) string {
	n := 0
	if s != nil {
		for _, e := range s.entries {
			if !e.dir {
				n++
			}
		}
	}
	return strconv.Itoa(n) + " files"
}

// readExport reads an exported workspace back as a file map, within the
// run's workspace limits (the export holds what the snapshot counted).
func readExport(dir string, limits sandbox.Limits) (map[string][]byte, error) {
	files := map[string][]byte{}
	var total int64
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if total += int64(len(data)); total > limits.WorkspaceBytes || int64(len(files)) >= limits.WorkspaceFiles {
			return &sandbox.WorkspaceError{Code: sandbox.CodeWorkspaceTooLarge}
		}
		files[filepath.ToSlash(rel)] = data
		return nil
	})
	return files, err
}
