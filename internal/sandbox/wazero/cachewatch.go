package wazero

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// cacheWatch tells a Progress when CompileModule compiles rather than
// reads wazero's compilation cache, which it does not say itself. It
// compares the cache's entries (wazero-<version>-<arch>-<os>/<key>)
// before and after: an empty cache is a compile for certain, said before
// it starts (a first run pauses for seconds); otherwise a new entry means
// one happened, said once it is done.
type cacheWatch struct {
	dir      string
	progress func(string)
	entries  map[string]bool
	said     bool
	start    time.Time
}

func (w *cacheWatch) before() {
	if w.progress == nil {
		return
	}
	w.entries, w.start = cacheEntries(w.dir), time.Now()
	if len(w.entries) == 0 {
		w.progress("compiling the WASI CPython build (once: later runs read it from the cache)")
		w.said = true
	}
}

func (w *cacheWatch) after() {
	if w.progress == nil || w.said {
		return
	}
	for e := range cacheEntries(w.dir) {
		if !w.entries[e] {
			w.progress(fmt.Sprintf("compiled the WASI CPython build in %.1f s (once: later runs read it from the cache)", time.Since(w.start).Seconds()))
			return
		}
	}
}

// cacheEntries lists the compiled modules in dir's version directories.
func cacheEntries(dir string) map[string]bool {
	out := map[string]bool{}
	versions, _ := os.ReadDir(dir)
	for _, v := range versions {
		if !v.IsDir() || !strings.HasPrefix(v.Name(), "wazero-") {
			continue
		}
		files, _ := os.ReadDir(filepath.Join(dir, v.Name()))
		for _, f := range files {
			// Not the stamps of entries checked (wazero's filecache, as
			// patched), which a read can add.
			if f.Type().IsRegular() && !strings.HasSuffix(f.Name(), ".tmp") && !strings.HasSuffix(f.Name(), ".verified") {
				out[v.Name()+"/"+f.Name()] = true
			}
		}
	}
	return out
}
