package serve

import (
	"io/fs"
	"os"
	"path/filepath"

	"github.com/apysup/apysup/internal/sandbox"
)

// writeWorkspace writes a checked file map (checkWorkspace) into a new
// directory dir: the run's workspace seed, which the supervisor copies
// into the sandbox's workspace within its limits.
func writeWorkspace(dir string, files map[string][]byte) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	for p, data := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(full, data, 0o600); err != nil {
			return err
		}
	}
	return nil
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
