package python

import (
	"embed"
	"io/fs"
)

//go:embed guest/*.py
var guest embed.FS

// GuestFiles holds the guest Python files at its root (agent_runtime.py,
// apysup_runner.py, _agent_runtime_host.py, _agent_runtime_wire.py). Both
// backends install exactly these bytes at /opt/apysup.
var GuestFiles fs.FS = mustSub(guest, "guest")

// Runner is the runner's file name inside GuestFiles.
const Runner = "apysup_runner.py"

// MaxOutcomeBytes bounds the runner's outcome.json wherever the host reads
// it: a 1 MiB result, an error with its traceback, and the fields around
// them.
const MaxOutcomeBytes = (1 << 20) + (64 << 10)

func mustSub(f fs.FS, dir string) fs.FS {
	sub, err := fs.Sub(f, dir)
	if err != nil {
		panic(err) // dir is a constant that go:embed has already checked
	}
	return sub
}
