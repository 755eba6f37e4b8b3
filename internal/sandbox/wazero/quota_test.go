package wazero

import (
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// Limits.OpenFiles bounds what the guest holds open on every mount, each
// mount's own directory included.
func TestOpenFilesBoundEveryMount(t *testing.T) {
	out := run(t, probePy+`open("/run/apysup/out/probe", "wb").close()
open("probe", "wb").close()
open("/tmp/probe", "wb").close()
for name, path, flags in [
    ("zoneinfo", "/usr/share/zoneinfo/UTC", os.O_RDONLY),
    ("zoneinfo dir", "/usr/share/zoneinfo/right", os.O_RDONLY | os.O_DIRECTORY),
    ("stdlib", "/usr/lib/python3.11/os.py", os.O_RDONLY),
    ("guest files", "/opt/apysup/agent_runtime.py", os.O_RDONLY),
    ("job", "/run/apysup/job/main.py", os.O_RDONLY),
    ("out", "/run/apysup/out/probe", os.O_RDONLY),
    ("workspace", "probe", os.O_RDWR),
    ("workspace dir", "/workspace", os.O_RDONLY | os.O_DIRECTORY),
    ("tmp", "/tmp/probe", os.O_RDWR),
    ("device", "/dev/null", os.O_WRONLY),
    ("devices dir", "/dev", os.O_RDONLY | os.O_DIRECTORY),
]:
    fds = []
    try:
        for _ in range(5000):
            fds.append(os.open(path, flags))
        print(name, "no limit")
    except OSError as e:
        print(name, len(fds), code(e))
    for fd in fds:
        os.close(fd)
`, runOpts{limits: sandbox.Limits{OpenFiles: 32}})
	// 32, less the nine mounts' own directories ("/" included).
	want := `zoneinfo 23 OSError EMFILE
zoneinfo dir 23 OSError EMFILE
stdlib 23 OSError EMFILE
guest files 23 OSError EMFILE
job 23 OSError EMFILE
out 23 OSError EMFILE
workspace 23 OSError EMFILE
workspace dir 23 OSError EMFILE
tmp 23 OSError EMFILE
device 23 OSError EMFILE
devices dir 23 OSError EMFILE
`
	if out.Status != sandbox.StatusOK || string(out.Stdout) != want {
		t.Fatalf("status %s stdout:\n%s\nwant:\n%s\nstderr %s", out.Status, out.Stdout, want, out.Stderr)
	}
}

// openFDs counts the descriptors this process holds.
func openFDs(t *testing.T) int {
	t.Helper()
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// A guest that opens one zoneinfo file 20,000 times exhausts its own
// quota, not the supervisor's descriptors: a run beside it is unaffected,
// and the process holds as many descriptors after both as before.
func TestExhaustedDescriptorsStayInTheRun(t *testing.T) {
	interpreter(t)
	run(t, "open('/usr/share/zoneinfo/UTC').close()", runOpts{}) // anything opened once per process
	before := openFDs(t)
	hog := probePy + `held = []
def keep():
    return held  # a function: the module's globals are a cycle, alive past the script
try:
    for _ in range(20000):
        held.append(open("/usr/share/zoneinfo/UTC", "rb"))
    print("no limit")
except OSError as e:
    print(len(held), code(e))
`
	neighbour := `import zoneinfo, datetime
for i in range(300):
    with open("f%d" % (i % 10), "w") as f:
        f.write(str(i))
    with open("/usr/share/zoneinfo/UTC", "rb") as f:
        f.read()
print(datetime.datetime(2024, 7, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Berlin")).utcoffset())
`
	var wg sync.WaitGroup
	var hogOut, nOut *sandbox.Outcome
	wg.Add(2)
	go func() { defer wg.Done(); hogOut = run(t, hog, runOpts{}) }()
	go func() { defer wg.Done(); nOut = run(t, neighbour, runOpts{}) }()
	wg.Wait()
	if got := string(hogOut.Stdout); got != "247 OSError EMFILE\n" {
		t.Errorf("the hog: %q (stderr %s)", got, hogOut.Stderr)
	}
	if nOut.Status != sandbox.StatusOK || string(nOut.Stdout) != "2:00:00\n" {
		t.Errorf("the neighbour: status %s stdout %q stderr %s", nOut.Status, nOut.Stdout, nOut.Stderr)
	}
	if after := openFDs(t); after != before {
		t.Errorf("%d descriptors open after the runs, %d before", after, before)
	}
}

// The runner writes outcome.json with the guest's own descriptors, after
// the script and its release of the script's globals, as natively: a
// script that still holds them all where nothing releases them leaves no
// outcome (the runner fails, exit 1); one that let them go, or held them
// in its globals, has its outcome written.
func TestOutcomeAfterExhaustedDescriptors(t *testing.T) {
	exhaust := `import agent_runtime
agent_runtime.set_result({"held": 10})
held = []
try:
    while True:
        held.append(open("/usr/share/zoneinfo/UTC", "rb"))
except OSError as e:
    print(len(held), type(e).__name__)
`
	out := run(t, exhaust+"import sys\nsys.held = held\n", runOpts{limits: sandbox.Limits{OpenFiles: 16}})
	if out.Status != sandbox.StatusError || out.ExitCode != 1 || out.GuestOutcome != nil ||
		string(out.Stdout) != "7 OSError\n" ||
		!strings.HasPrefix(lastLine(out.Stderr), "OSError: [Errno 24] Too many open files: '/run/apysup/out/outcome.json.tmp-") {
		t.Fatalf("held: status %s exit %d outcome %s stdout %q stderr %s", out.Status, out.ExitCode, out.GuestOutcome, out.Stdout, out.Stderr)
	}
	for name, end := range map[string]string{"closed": "for f in held:\n    f.close()\n", "in its globals": "def keep():\n    return held\n"} {
		out = run(t, exhaust+end, runOpts{limits: sandbox.Limits{OpenFiles: 16}})
		if out.Status != sandbox.StatusOK || !strings.Contains(string(out.GuestOutcome), `"result":{"held":10}`) {
			t.Fatalf("%s: status %s outcome %s stderr %s", name, out.Status, out.GuestOutcome, out.Stderr)
		}
	}
}
