package parity

import (
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
)

// TestDbmFilesAcrossBackends writes a dbm.ndbm database and a shelf on one
// backend and reads them on the other, both ways, beside each backend
// reading its own: both link Debian's Berkeley DB 5.3, so a file either
// backend writes is one the other reads, as the same files would be on a
// host that ran both. The four readings must agree.
func TestDbmFilesAcrossBackends(t *testing.T) {
	sup := need(t)
	write := corpusCase{script: "std_dbm.py", args: []string{"write"}}
	read := corpusCase{script: "std_dbm.py", args: []string{"read"}}
	const native, wazero = supervisor.BackendNative, supervisor.BackendWazero
	var first string
	for _, pair := range [][2]string{{native, wazero}, {wazero, native}, {native, native}, {wazero, wazero}} {
		writer := prepare(t, write, pair[0])
		writer.run(t.Context(), sup)
		w := writer.observe(t)
		if w.res.Status != sandbox.StatusOK || w.tree == nil {
			t.Fatalf("%s writing: status %s, workspace %+v\n%s", pair[0], w.res.Status, w.res.Workspace, w.res.Stderr)
		}
		for _, name := range []string{"exchange.db", "exchange-shelf.db"} {
			if _, ok := w.tree[name]; !ok {
				t.Fatalf("%s wrote no %s: %s", pair[0], name, w.res.Stdout)
			}
		}
		reader := prepare(t, read, pair[1])
		reader.req.WorkspaceSeed = writer.req.ExportDir
		reader.run(t.Context(), sup)
		r := reader.observe(t)
		if r.res.Status != sandbox.StatusOK {
			t.Fatalf("%s reading %s's files: status %s\n%s", pair[1], pair[0], r.res.Status, r.res.Stderr)
		}
		if !strings.HasPrefix(r.res.Stdout, "exchange dbm.ndbm 302 ") || !strings.Contains(r.res.Stdout, "exchange-shelf dbm.ndbm ['config', 'rows']") {
			t.Errorf("%s reading %s's files printed\n%s", pair[1], pair[0], r.res.Stdout)
		}
		if first == "" {
			first = r.res.Stdout
		} else if r.res.Stdout != first {
			t.Errorf("%s reading %s's files printed\n%s\nwhere the first pair's reader printed\n%s", pair[1], pair[0], r.res.Stdout, first)
		}
	}
}
