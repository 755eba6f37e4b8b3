package integration

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
)

// TestWorkspaceTrapsStayInside: what a guest leaves in /workspace and in
// its outcome directory is handled by the host as root after the run.
// Symlinks to a host secret, a FIFO and outcome.json as a symlink must not
// make the host read, export or block on anything; set-user-ID bits do not
// survive export; a tree deeper than PATH_MAX is refused and cleaned up.
func TestWorkspaceTrapsStayInside(t *testing.T) {
	t.Parallel()
	need(t)
	secret := filepath.Join("/root", "escape-canary-"+randomHex(t, 8))
	if err := os.WriteFile(secret, []byte(`{"stolen":"APYSUP-HOST-`+`SECRET-CANARY"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// Cleanups run after the parallel subtests, unlike defers.
	t.Cleanup(func() {
		if b, err := os.ReadFile(secret); err != nil || len(b) == 0 {
			t.Errorf("the host secret was changed: %q %v", b, err)
		}
		os.Remove(secret)
	})
	script := guestScript(t, "workspace.py")

	t.Run("links", func(t *testing.T) {
		t.Parallel()
		export := filepath.Join(t.TempDir(), "export")
		res := run(t, supervisor.Request{ScriptPath: script, Args: []string{"links", secret}, ExportDir: export})
		if res.Status != sandbox.StatusOK {
			t.Fatalf("guest: %s", summary(res))
		}
		parseMarkers(t, res).expect(t, nil, "symlink:absolute", "symlink:relative", "symlink:dir", "fifo", "symlink:outcome")
		if res.Result != nil {
			t.Errorf("the host read outcome.json through the guest's symlink: result %s", res.Result)
		}
		w := res.Workspace
		if w == nil || !w.Verify() || w.Disposition != "discarded" || w.ErrorCode != sandbox.CodeWorkspaceUnexportable {
			t.Fatalf("workspace receipt %+v: want the links refused (%s)", w, sandbox.CodeWorkspaceUnexportable)
		}
		if _, err := os.Lstat(export); !os.IsNotExist(err) {
			t.Errorf("export target exists after a refused export: %v", err)
		}
	})

	t.Run("setuid", func(t *testing.T) {
		t.Parallel()
		export := filepath.Join(t.TempDir(), "export")
		res := run(t, supervisor.Request{ScriptPath: script, Args: []string{"setuid", secret}, ExportDir: export})
		if res.Status != sandbox.StatusOK {
			t.Fatalf("guest: %s", summary(res))
		}
		m := parseMarkers(t, res)
		m.expect(t, nil, "setuid")
		var inside string
		m.infoAs(t, "suid_mode", &inside)
		if res.Workspace == nil || res.Workspace.Disposition != "exported" {
			t.Fatalf("workspace receipt %+v", res.Workspace)
		}
		for _, name := range []string{"suid", "plain.txt"} {
			fi, err := os.Lstat(filepath.Join(export, name))
			if err != nil {
				t.Fatal(err)
			}
			st := fi.Sys().(*syscall.Stat_t)
			if fi.Mode()&(os.ModeSetuid|os.ModeSetgid) != 0 || st.Uid != uint32(os.Getuid()) {
				t.Errorf("exported %s: mode %v owner %d (inside: %s); want no set-ID bit, owned by the supervisor's uid",
					name, fi.Mode(), st.Uid, inside)
			}
		}
	})

	t.Run("deep", func(t *testing.T) {
		t.Parallel()
		res := run(t, supervisor.Request{ScriptPath: script, Args: []string{"deep", secret}})
		if res.Status != sandbox.StatusOK {
			t.Fatalf("guest: %s", summary(res))
		}
		parseMarkers(t, res).expect(t, nil, "deep")
		// Nothing failed on the host: the run's report is the guest's.
		if res.ErrorCode != "" || res.Error != "" {
			t.Errorf("a deep tree reported as a host failure: %q (%d bytes) %q", res.ErrorCode, len(res.Error), clip(res.Error, 300))
		}
		if w := res.Workspace; w == nil || !w.Verify() || w.Disposition != "discarded" || w.ErrorCode != sandbox.CodeWorkspaceTooLarge {
			t.Errorf("workspace receipt %+v: want the snapshot refused (%s)", w, sandbox.CodeWorkspaceTooLarge)
		}
		// The tree itself must be gone: TestMain's final check.
	})

	t.Run("names", func(t *testing.T) {
		t.Parallel()
		export := filepath.Join(t.TempDir(), "export")
		res := run(t, supervisor.Request{ScriptPath: script, Args: []string{"names", secret}, ExportDir: export})
		if res.Status != sandbox.StatusOK {
			t.Fatalf("guest: %s", summary(res))
		}
		parseMarkers(t, res).expect(t, nil, "names")
		w := res.Workspace
		if w == nil || !w.Verify() || w.Disposition != "discarded" || w.ErrorCode != sandbox.CodeWorkspaceUnexportable || w.FinalTreeSHA256 != "" {
			t.Fatalf("workspace receipt %+v: want the snapshot refused (%s) and no final digest", w, sandbox.CodeWorkspaceUnexportable)
		}
		if _, err := os.Lstat(export); !os.IsNotExist(err) {
			t.Errorf("export target exists after a refused export: %v", err)
		}
	})
}

// TestExportKeepsModes: what a guest makes group- or world-writable is
// exported with exactly those bits (the receipt binds them), whatever the
// supervisor's umask.
func TestExportKeepsModes(t *testing.T) {
	t.Parallel()
	need(t)
	script := guestScript(t, `os.umask(0)
os.chdir('/workspace')
with open('shared.txt', 'w') as f:
    f.write('shared')
os.mkdir('open')
os.mkdir('sealed')
with open('sealed/inside.txt', 'w') as f:
    f.write('inside')
os.chmod('sealed', 0o555)
emit('ALLOWED', 'made')
`)
	export := filepath.Join(t.TempDir(), "export")
	res := run(t, supervisor.Request{ScriptPath: script, ExportDir: export})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	parseMarkers(t, res).expect(t, nil, "made")
	if w := res.Workspace; w == nil || !w.Verify() || w.Disposition != "exported" || w.ErrorCode != "" {
		t.Fatalf("workspace receipt %+v", w)
	}
	for name, want := range map[string]os.FileMode{"shared.txt": 0o666, "open": 0o777, "sealed": 0o555, "sealed/inside.txt": 0o666} {
		fi, err := os.Lstat(filepath.Join(export, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != want {
			t.Errorf("exported %s: %v, want %v", name, fi.Mode().Perm(), want)
		}
	}
}

// TestFileLeftOpenReachesTheWorkspace: a file the script never closed is
// flushed and closed when the script ends, as `python script.py` does, so
// what it wrote is in the workspace the host exports (the runner releases
// the script's globals before it exits; it once exited with the buffer
// unwritten).
func TestFileLeftOpenReachesTheWorkspace(t *testing.T) {
	t.Parallel()
	need(t)
	script := guestScript(t, `left_open = open('/workspace/left_open.txt', 'w')
left_open.write('buffered, never closed')
emit('ALLOWED', 'written')
`)
	export := filepath.Join(t.TempDir(), "export")
	res := run(t, supervisor.Request{ScriptPath: script, ExportDir: export})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	parseMarkers(t, res).expect(t, nil, "written")
	if b, err := os.ReadFile(filepath.Join(export, "left_open.txt")); err != nil || string(b) != "buffered, never closed" {
		t.Errorf("the file left open, exported: %q %v", b, err)
	}
}
