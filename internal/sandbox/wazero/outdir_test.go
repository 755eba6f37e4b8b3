package wazero

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/moby/sys/mountinfo"
	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

func TestSweepRemovesOnlyAbandonedTempDirs(t *testing.T) {
	tmp := t.TempDir()
	old := time.Now().Add(-2 * sandbox.LockGrace)
	mk := func(name string, lock string, mtime time.Time) string {
		dir := filepath.Join(tmp, name)
		if err := os.MkdirAll(filepath.Join(dir, tempOutName), 0o700); err != nil {
			t.Fatal(err)
		}
		if lock != "" {
			if err := os.WriteFile(filepath.Join(dir, ".lock"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chtimes(dir, mtime, mtime); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	dead := mk(tempDirPrefix+"dead", "unlocked", old)
	// What its dead process left mounted (as root): the out directory's tmpfs.
	if _, err := sandbox.MountTmpfs(filepath.Join(dead, tempOutName), 0o700, 1<<20, 64); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(dead, old, old); err != nil {
		t.Fatal(err)
	}
	mk(tempDirPrefix+"nolock", "", old)
	// A directory under its final name was locked before it got that name
	// (sandbox.NewLockedDir renames it into place): unlocked, it is
	// abandoned at any age. A hidden one may be on its way to being locked:
	// it waits out LockGrace.
	mk(tempDirPrefix+"dead-young", "unlocked", time.Now())
	mk(tempDirPrefix+"nolock-young", "", time.Now())
	mk("."+tempDirPrefix+"young", "", time.Now())
	mk("."+tempDirPrefix+"old", "", old)
	mk("other-dir", "", old)
	live := mk(tempDirPrefix+"live", "locked", old)
	lock, err := os.OpenFile(filepath.Join(live, ".lock"), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		t.Fatal(err)
	}
	if err := sweepTempDirs(tmp); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(tmp)
	var left []string
	for _, e := range ents {
		left = append(left, strings.TrimPrefix(e.Name(), tempDirPrefix))
	}
	sort.Strings(left)
	if mounts, err := mountinfo.GetMounts(mountinfo.PrefixFilter(tmp)); err != nil || len(mounts) != 0 {
		t.Errorf("mounts left: %d (%v)", len(mounts), err)
	}
	if strings.Join(left, " ") != ".apysup-wazero-young live other-dir" {
		t.Fatalf("left %v", left)
	}
}

// A run's own directory is locked while it lasts, and gone after.
func TestMakeScratchDirs(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	s, remove, err := makeScratchDirs("", 1<<20, 300)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(s.out)
	if filepath.Dir(s.tmp) != dir {
		t.Fatalf("out %s and tmp %s in different directories", s.out, s.tmp)
	}
	checkTmpMount(t, s.tmp, 1<<20, 300)
	checkTmpMount(t, s.out, sandbox.OutDirBytes, sandbox.OutDirFiles)
	past := time.Now().Add(-2 * sandbox.LockGrace)
	if err := os.Chtimes(dir, past, past); err != nil {
		t.Fatal(err)
	}
	if err := sweepTempDirs(tmp); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{s.out, s.tmp} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Fatalf("a sweep removed a live run's directory: %v", err)
		}
	}
	remove()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("after removal: %v", err)
	}
	runDir := t.TempDir()
	s, remove, err = makeScratchDirs(runDir, 1<<20, 300)
	if err != nil || filepath.Dir(filepath.Dir(s.out)) != runDir || filepath.Dir(s.tmp) != filepath.Dir(s.out) {
		t.Fatalf("%+v %v", s, err)
	}
	checkTmpMount(t, s.tmp, 1<<20, 300)
	checkTmpMount(t, s.out, sandbox.OutDirBytes, sandbox.OutDirFiles)
	remove()
	if ents, _ := os.ReadDir(runDir); len(ents) != 0 {
		t.Fatalf("left %v", ents)
	}
	if left, err := mountinfo.GetMounts(mountinfo.PrefixFilter(runDir)); err != nil || len(left) != 0 {
		t.Fatalf("mounts left: %d (%v)", len(left), err)
	}
}

// checkTmpMount: as root, /tmp and the out directory are tmpfs mounts
// (which list entries in the native guest's order) a little larger than
// the budgets that bound them; without root, plain directories.
func checkTmpMount(t *testing.T, dir string, bytes, files int64) {
	t.Helper()
	mounts, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(dir))
	if err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if len(mounts) != 0 {
			t.Fatalf("%s is a mount without root", dir)
		}
		return
	}
	want := fmt.Sprintf("size=%dk,nr_inodes=%d,mode=700", tmpfsBytes(bytes, files)>>10, files+tmpfsSpareFiles)
	if len(mounts) != 1 || mounts[0].FSType != "tmpfs" || !strings.Contains(mounts[0].VFSOptions, want) {
		t.Fatalf("%s: mounts %+v, want a tmpfs with %s", dir, mounts, want)
	}
}

// With a RunDir (the supervisor's, swept when its supervisor dies) the out
// directory and /tmp are made there, and removed with the run.
func TestOutDirInRunDir(t *testing.T) {
	runDir := t.TempDir()
	var during []string
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		ents, _ := os.ReadDir(runDir)
		for _, e := range ents {
			during = append(during, e.Name())
		}
		return []byte(`{"status":"ok","result":null}`)
	})
	out := run(t, callScript(`b'{"call_id":"capability-1","capability":"echo","arguments":{}}'`), runOpts{d: d, runDir: runDir})
	if out.Status != sandbox.StatusOK || out.GuestOutcome == nil {
		t.Fatalf("status %s outcome %s stderr %s", out.Status, out.GuestOutcome, out.Stderr)
	}
	if len(during) != 1 || !strings.HasPrefix(during[0], runDirPrefix) {
		t.Fatalf("run dir during the run: %v", during)
	}
	if ents, _ := os.ReadDir(runDir); len(ents) != 0 {
		t.Fatalf("left in the run dir: %v", ents)
	}
}

// RunLeavingScratch leaves the scratch directories (and their mounts) for
// its caller's remove, after the Outcome is complete; remove takes them.
func TestRunLeavingScratch(t *testing.T) {
	in := interpreter(t)
	runDir := t.TempDir()
	script := filepath.Join(t.TempDir(), "main.py")
	if err := os.WriteFile(script, []byte("open('/run/apysup/out/kept', 'w').write('x')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, remove, err := in.Backend(nil).RunLeavingScratch(context.Background(),
		sandbox.Job{ScriptPath: script, WorkspaceDir: t.TempDir(), RunDir: runDir}, sandbox.Limits{})
	if err != nil || out.Status != sandbox.StatusOK || out.GuestOutcome == nil {
		t.Fatalf("status %s outcome %s %v stderr %s", out.Status, out.GuestOutcome, err, out.Stderr)
	}
	ents, _ := os.ReadDir(runDir)
	if len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), runDirPrefix) {
		t.Fatalf("run dir before remove: %v", ents)
	}
	if b, err := os.ReadFile(filepath.Join(runDir, ents[0].Name(), tempOutName, "kept")); err != nil || string(b) != "x" {
		t.Fatalf("the out directory before remove: %q %v", b, err)
	}
	remove()
	if ents, _ := os.ReadDir(runDir); len(ents) != 0 {
		t.Fatalf("left in the run dir: %v", ents)
	}
	if left, err := mountinfo.GetMounts(mountinfo.PrefixFilter(runDir)); err != nil || len(left) != 0 {
		t.Fatalf("mounts left: %v %v", left, err)
	}
}

// Without one it is made in a locked directory of its own under TMPDIR,
// removed with the run.
func TestStandaloneOutDir(t *testing.T) {
	interpreter(t) // loaded (and swept) before TMPDIR changes
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	runDirs := func() (found []string) {
		ents, _ := os.ReadDir(tmp)
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), tempDirPrefix) {
				inside, _ := os.ReadDir(filepath.Join(tmp, e.Name()))
				for _, i := range inside {
					found = append(found, i.Name())
				}
			}
		}
		return found
	}
	var during []string
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		during = runDirs()
		return []byte(`{"status":"ok","result":null}`)
	})
	out := run(t, callScript(`b'{"call_id":"capability-1","capability":"echo","arguments":{}}'`), runOpts{d: d})
	if out.Status != sandbox.StatusOK || out.GuestOutcome == nil {
		t.Fatalf("status %s outcome %s stderr %s", out.Status, out.GuestOutcome, out.Stderr)
	}
	if strings.Join(during, " ") != ".lock"+" "+tempOutName+" "+tempTmpName {
		t.Fatalf("the run's directory held %v during the run", during)
	}
	if after := runDirs(); after != nil {
		t.Fatalf("left in TMPDIR: %v", after)
	}
}
