package integration

import (
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// TestGuestRunsHostTools: what a guest script commonly runs works under
// the filter and in the guest's file system: tar, gzip and cp through
// their legacy and alternative calls (creat, fadvise64, FICLONE,
// copy_file_range), Debian's /etc/alternatives links (awk, which), the
// sitecustomize.py link into /etc, os.eventfd, and a program written to
// /tmp or /workspace and executed there. Terminals are not offered
// (docs/guest-api.md): os.openpty fails.
func TestGuestRunsHostTools(t *testing.T) {
	t.Parallel()
	need(t)
	script := `import subprocess
os.chdir('/workspace')
with open('notes.txt', 'w') as f:
    f.write('pear\napple\n')

def sh(name, *argv):
    control(name, subprocess.run, list(argv), check=True, capture_output=True)

sh('tar:create', 'tar', '-cf', 'a.tar', 'notes.txt')
sh('tar:extract', 'tar', '-xf', 'a.tar', '-C', '/tmp')
sh('gzip', 'gzip', '-k', 'notes.txt')
sh('cp', 'cp', 'notes.txt', 'copy.txt')
sh('sort', 'sort', '-o', 'sorted.txt', 'notes.txt')
sh('awk', 'awk', 'BEGIN { print 1 }')
sh('which', 'which', 'tar')
control('sitecustomize', lambda: open('/usr/lib/python3.11/sitecustomize.py').read())
control('eventfd', lambda: os.close(os.eventfd(0)))
for where in ('/tmp', '/workspace'):
    path = where + '/tool.sh'
    with open(path, 'w') as f:
        f.write('#!/bin/sh\necho ran\n')
    os.chmod(path, 0o755)
    sh('exec:' + where, path)
attempt('openpty', os.openpty)
`
	res := runGuest(t, script, sandbox.Limits{})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	parseMarkers(t, res).expect(t, map[string]string{"openpty": "ENOENT"},
		"tar:create", "tar:extract", "gzip", "cp", "sort", "awk", "which", "sitecustomize", "eventfd", "exec:/tmp", "exec:/workspace")
}
