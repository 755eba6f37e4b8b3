package native

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

var fmtSscanf = fmt.Sscanf

func TestEnvironmentIsScrubbed(t *testing.T) {
	t.Setenv("APYSUP_SECRET", "leak")
	b := testBackend(t)
	out := run(t, b, "import json, os\nprint(json.dumps(dict(os.environ)))\n", sandbox.Limits{})
	var env map[string]string
	if err := json.Unmarshal(out.Stdout, &env); err != nil {
		t.Fatalf("stdout %q stderr %q: %v", out.Stdout, out.Stderr, err)
	}
	want := map[string]string{}
	for _, kv := range guestEnv {
		k, v, _ := strings.Cut(kv, "=")
		want[k] = v
	}
	if fmt.Sprint(env) != fmt.Sprint(want) {
		t.Errorf("guest env %v, want %v", env, want)
	}
}

func TestOnlyLoopback(t *testing.T) {
	b := testBackend(t)
	script := `import socket
ifaces = sorted(l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:])
print(ifaces)
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    print('inet allowed')
except OSError as e:
    print('inet refused', e.errno)
`
	out := run(t, b, script, sandbox.Limits{})
	lines := strings.Split(strings.TrimSpace(string(out.Stdout)), "\n")
	if len(lines) != 2 || lines[0] != "['lo']" || !strings.HasPrefix(lines[1], "inet refused") {
		t.Fatalf("stdout %q stderr %q", out.Stdout, out.Stderr)
	}
}

func TestConfinementFacts(t *testing.T) {
	b := testBackend(t)
	script := `import os, json, stat
st = {l.split(':')[0]: l.split(':')[1].strip() for l in open('/proc/self/status') if ':' in l}
facts = {
    "uid": os.getuid(), "gid": os.getgid(), "pid": os.getpid(), "cwd": os.getcwd(),
    "caps": [st["CapInh"], st["CapPrm"], st["CapEff"], st["CapBnd"], st["CapAmb"]],
    "no_new_privs": st["NoNewPrivs"], "seccomp": st["Seccomp"],
    "devs": sorted(d for d in os.listdir('/dev') if stat.S_ISCHR(os.lstat('/dev/' + d).st_mode)), "root": sorted(os.listdir('/')),
    "procs": sorted(int(p) for p in os.listdir('/proc') if p.isdigit()),
}
for path in ['/usr/x', '/etc/x', '/x', '/run/apysup/x', '/run/apysup/job/x', '/opt/apysup/x']:
    try:
        open(path, 'w')
        facts[path] = 'writable'
    except OSError:
        pass
open('/workspace/w', 'w').write('ok')
open('/run/apysup/out/o', 'w').write('ok')
print(json.dumps(facts))
`
	out := run(t, b, script, sandbox.Limits{})
	var f struct {
		UID, GID, Pid int
		Cwd           string
		Caps          []string
		NoNewPrivs    string `json:"no_new_privs"`
		Seccomp       string
		Devs, Root    []string
		Procs         []int
	}
	if err := json.Unmarshal(out.Stdout, &f); err != nil {
		t.Fatalf("stdout %q stderr %q: %v", out.Stdout, out.Stderr, err)
	}
	if strings.Contains(string(out.Stdout), "writable") {
		t.Errorf("guest could write outside /workspace, /tmp and out: %s", out.Stdout)
	}
	// The runner is pid 1 (init: it reaps and forwards signals); the script
	// is its child.
	if f.UID != GuestUID || f.GID != GuestGID || f.Pid <= 1 || f.Cwd != "/workspace" {
		t.Errorf("uid %d gid %d pid %d cwd %q", f.UID, f.GID, f.Pid, f.Cwd)
	}
	for _, c := range f.Caps {
		if strings.Trim(c, "0") != "" {
			t.Errorf("capability sets %v not empty", f.Caps)
			break
		}
	}
	if f.NoNewPrivs != "1" || f.Seccomp != "2" {
		t.Errorf("no_new_privs %q seccomp %q", f.NoNewPrivs, f.Seccomp)
	}
	if fmt.Sprint(f.Devs) != "[full null random urandom zero]" {
		t.Errorf("/dev holds the device nodes %v", f.Devs)
	}
	if fmt.Sprint(f.Procs) != fmt.Sprint([]int{1, f.Pid}) {
		t.Errorf("guest sees processes %v", f.Procs)
	}
	t.Logf("root %v devs %v", f.Root, f.Devs)
}

// Eight runs at once: distinct host uids, private /tmp, and none can signal
// another run or the supervisor.
func TestConcurrentRunsAreIsolated(t *testing.T) {
	b := testBackend(t)
	script := `import os, sys, signal
uid_map = open('/proc/self/uid_map').read().split()
open('/tmp/mine', 'w').write(sys.argv[1])
seen = sorted(os.listdir('/tmp'))
errs = []
for pid in map(int, sys.argv[2:]):
    try:
        os.kill(pid, signal.SIGKILL)
        errs.append('killed %d' % pid)
    except ProcessLookupError:
        pass
print(uid_map[uid_map.index('1000') + 1], seen, open('/tmp/mine').read(), errs)
`
	const n = 8
	outs := make([]*sandbox.Outcome, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Host pids: the supervisor and its parent.
			outs[i] = run(t, b, script, sandbox.Limits{}, fmt.Sprint(i), fmt.Sprint(os.Getpid()), fmt.Sprint(os.Getppid()))
		}()
	}
	wg.Wait()
	uids := map[string]bool{}
	for i, out := range outs {
		if out.Status != sandbox.StatusOK {
			t.Fatalf("run %d: status %s stderr %q", i, out.Status, out.Stderr)
		}
		var uid, seen, mine, errs string
		fields := strings.SplitN(strings.TrimSpace(string(out.Stdout)), " ", 4)
		if len(fields) != 4 {
			t.Fatalf("run %d: stdout %q", i, out.Stdout)
		}
		uid, seen, mine, errs = fields[0], fields[1], fields[2], fields[3]
		if uids[uid] {
			t.Errorf("run %d: host uid %s shared", i, uid)
		}
		uids[uid] = true
		if seen != "['mine']" || mine != fmt.Sprint(i) || errs != "[]" {
			t.Errorf("run %d: /tmp %s marker %s kill results %s", i, seen, mine, errs)
		}
	}
	assertClean(t, b)
}

// A guest cannot reach another run's processes, even knowing their host pids.
func TestRunsCannotSignalEachOther(t *testing.T) {
	b := testBackend(t)
	victim, _, pid := startSleeper(t, b)
	script := `import os, signal, sys
res = []
for target in (int(sys.argv[1]), -1):
    try:
        os.kill(target, signal.SIGKILL)
        res.append('sent')
    except OSError as e:
        res.append(e.__class__.__name__)
print(res)
`
	out := run(t, b, script, sandbox.Limits{}, strconv.Itoa(pid))
	if got := strings.TrimSpace(string(out.Stdout)); got != "['ProcessLookupError', 'ProcessLookupError']" {
		t.Errorf("attacker: %q stderr %q", got, out.Stderr)
	}
	if err := syscall.Kill(pid, 0); err != nil {
		t.Fatalf("the victim's pid 1 is gone: %v", err)
	}
	// A SIGKILL the supervisor's timer or context did not send is not its
	// decision: the run ends in error (killed_by_signal:SIGKILL).
	victim.kill()
	if out, err := victim.Wait(context.Background()); err != nil || out.Status != sandbox.StatusError || out.ErrorCode != CodeKilledBySignal+":SIGKILL" {
		t.Fatalf("victim: %v %+v", err, out)
	}
	if err := victim.Destroy(); err != nil {
		t.Fatal(err)
	}
	assertClean(t, b)
}
