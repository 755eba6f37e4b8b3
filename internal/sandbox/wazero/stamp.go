package wazero

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Stamps spare a process's Load hashing the build (19 MB) when an earlier
// Load already hashed the very same files: a stamp records, per build
// file, the digest it matched and the file's identity at the time
// (fileID). A file whose identity still matches is the version that was
// hashed, as far as the kernel can tell: any write, truncate, chmod or
// replacement changes its ctime (or its inode), and no unprivileged
// process can set a ctime back.
//
// The trust model is the build's own. The manifest that the hash is
// compared with sits in the same directory as the files, so the check
// catches a damaged or half-written build, not a forged one: whoever can
// write the files can write the manifest. A stamp keeps that: it lives in
// the compilation cache, a directory of the user's own (0700, like the
// machine code wazero keeps there and runs, which is trusted far more),
// and is read only when the user owns it and no one else can write it.
// What a stamp gives up is a rehash that would notice bytes changing on
// disk without the kernel knowing (a failing disk, a network file system
// whose server lies about ctime): such a build is hashed again only when
// its stamp goes.

// stampSchema names the stamp file's format.
const stampSchema = "apysup.wasi.stamp.v1"

// racyWindow is how old a file's ctime must be for its hash to be
// stamped: ctime has the granularity of the kernel's clock tick, so a
// file written again within the same tick after it was hashed would keep
// its ctime (Git's "racy" entries). Builds are written once, minutes
// before the first run; a file younger than this is hashed every Load.
const racyWindow = 2 * time.Second

// fileID is what identifies one version of a file: a new inode or a
// changed size, mtime or ctime is another version.
type fileID struct {
	Dev     uint64 `json:"dev"`
	Ino     uint64 `json:"ino"`
	Size    int64  `json:"size"`
	MtimeNs int64  `json:"mtime_ns"`
	CtimeNs int64  `json:"ctime_ns"`
}

type fileStamp struct {
	SHA256 string `json:"sha256"`
	ID     fileID `json:"id"`
}

type stampDoc struct {
	SchemaVersion string               `json:"schema_version"`
	Key           string               `json:"key"`
	Files         map[string]fileStamp `json:"files"`
	// MinMemory is python.wasm's minimum memory in bytes, recorded once a
	// Load compiled the build into the compilation cache beside the stamp
	// (0: none did). A Load whose guests run in children needs nothing
	// else of the compiled module (compiledMinMemory).
	MinMemory uint64 `json:"min_memory,omitempty"`
	// Guarded: the code that Load compiled is for a guarded memory,
	// without bounds checks (memory.go), which is other code in the
	// cache than the code with them.
	Guarded bool `json:"guarded,omitempty"`
}

// stamps are the stamps of one build, read from and saved to path.
type stamps struct {
	path  string
	doc   stampDoc
	dirty bool
}

// openStamps reads the stamps of the build with key from dir. A missing,
// unreadable or untrusted stamp file is no stamps at all: every file is
// hashed, and the stamps saved anew.
func openStamps(dir, key string) *stamps {
	s := &stamps{path: filepath.Join(dir, key+".json")}
	s.doc = stampDoc{SchemaVersion: stampSchema, Key: key, Files: map[string]fileStamp{}}
	if !ownedPrivately(s.path) {
		return s
	}
	data, err := os.ReadFile(s.path)
	if err != nil {
		return s
	}
	var doc stampDoc
	if json.Unmarshal(data, &doc) != nil || doc.SchemaVersion != stampSchema || doc.Key != key || doc.Files == nil {
		return s
	}
	s.doc = doc
	return s
}

// verified says whether name, now identified by id, is the version that
// once hashed to sha256.
func (s *stamps) verified(name, sha256 string, id fileID) bool {
	if s == nil {
		return false
	}
	st, ok := s.doc.Files[name]
	return ok && st.SHA256 == sha256 && st.ID == id
}

// record stamps name, identified by id, as hashing to sha256, unless its
// ctime is too recent to tell a later write apart (racyWindow).
func (s *stamps) record(name, sha256 string, id fileID, now time.Time) {
	if s == nil || now.Sub(time.Unix(0, id.CtimeNs)) < racyWindow || now.Sub(time.Unix(0, id.MtimeNs)) < racyWindow {
		return
	}
	s.doc.Files[name] = fileStamp{SHA256: sha256, ID: id}
	s.dirty = true
}

// save writes the stamps if they changed, atomically (a temporary file
// renamed over the old one); failing to is only a rehash next time.
func (s *stamps) save() {
	if s == nil || !s.dirty {
		return
	}
	data, err := json.Marshal(s.doc)
	if err != nil {
		return
	}
	dir := filepath.Dir(s.path)
	if os.MkdirAll(dir, 0o700) != nil || !ownedPrivately(dir) {
		return
	}
	f, err := os.CreateTemp(dir, filepath.Base(s.path)+".*.tmp")
	if err != nil {
		return
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return
	}
	s.dirty = false
}

// compiledMinMemory is the module's minimum memory if an earlier Load
// compiled this build into the compilation cache for a guarded memory or
// not, as guarded says, 0 if none did.
func (s *stamps) compiledMinMemory(guarded bool) uint64 {
	if s == nil || s.doc.Guarded != guarded {
		return 0
	}
	return s.doc.MinMemory
}

// recordCompiled records that this build is compiled into the cache, for
// a guarded memory or not, with its module's minimum memory.
func (s *stamps) recordCompiled(minMemory uint64, guarded bool) {
	if s == nil || minMemory == 0 || s.doc.MinMemory == minMemory && s.doc.Guarded == guarded {
		return
	}
	s.doc.MinMemory, s.doc.Guarded = minMemory, guarded
	s.dirty = true
}
