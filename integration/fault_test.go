package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/testenv"
)

// faultScript makes 9 calls whose effects land on the host: three appends
// through an exec tool (an append is not idempotent, so a second dispatch
// shows as a second line), three kv puts, and three puts through kv in
// strict acceptance (a provider: issue 16), whose lost outcomes the next
// attempt resolves by asking it. An ambiguous call is caught and reported,
// as an agent would.
const faultScript = `import effects, notes, ledger, agent_runtime
for i in range(1, 4):
    for name, fn, args in (("append", effects.append, {"n": str(i)}), ("put", notes.put, {"key": "k%d" % i, "value": i}),
                           ("strict", ledger.put, {"key": "k%d" % i, "value": i})):
        try:
            fn(**args)
            print(name, i, "ok")
        except agent_runtime.AmbiguousOutcome as e:
            print(name, i, "ambiguous", e.error_code)
`

// faultBoundaries are the journal's boundaries (internal/journal): the
// campaign kills the supervisor just before and just after each becomes
// durable, and after the epoch file is written.
var faultBoundaries = []string{
	"run_begun.before", "run_begun.committed",
	"call_intent.before", "call_intent.committed",
	"dispatch_begun.before", "dispatch_begun.committed",
	"call_completed.before", "call_completed.committed",
	"run_ended.before", "run_ended.committed",
	"epoch.written",
}

// TestFaultCampaign is issue 15's proof: a real `apysup run` under an
// idempotency key is SIGKILLed at every journal boundary (a build with
// -tags failpoints) and at random moments, then run again under the same
// key until it completes. After each: no effect happened twice, every call
// answers completed, unknown or absent, every completed call has its
// receipt in the final RunResult, `journal verify` is clean, and nothing
// the killed supervisors started is left once a new one has run.
// APYSUP_FAULT_KILLS sets the number of kills (100 here, 1000 in make fault).
func TestFaultCampaign(t *testing.T) {
	need(t)
	kills := 100
	if n, err := strconv.Atoi(os.Getenv("APYSUP_FAULT_KILLS")); err == nil && n > 0 {
		kills = n
	}
	bin := buildFailpointCLI(t)
	// Traversable (0711) by each run's container root, as /tmp is.
	work, err := os.MkdirTemp("", "af") // short: the channel socket path is bounded (108 bytes)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(work) })
	if err := os.Chmod(work, 0o711); err != nil {
		t.Fatal(err)
	}
	tool := filepath.Join(work, "append.sh")
	writeFile(t, tool, "#!/bin/sh\n# one line per dispatch: the call's arguments\ncat >> \"$EFFECTS\"\necho >> \"$EFFECTS\"\necho '{\"appended\": true}'\n", 0o755)
	script := filepath.Join(work, "fault.py")
	writeFile(t, script, faultScript, 0o644)
	credential := filepath.Join(work, "kv.credential") // the strict kv provider's host secret
	writeFile(t, credential, strings.Repeat("fault-campaign-credential-", 2), 0o600)
	tmp := filepath.Join(work, "t") // the supervisors' run directories
	if err := os.Mkdir(tmp, 0o711); err != nil {
		t.Fatal(err)
	}

	rng := rand.New(rand.NewPCG(1, uint64(time.Now().UnixNano())))
	var killedPIDs []int
	stats := map[string]int{}
	for i := 0; i < kills; i++ {
		dir := filepath.Join(work, "k"+strconv.Itoa(i))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		effects := filepath.Join(dir, "effects.log")
		manifest := filepath.Join(dir, "plan.json")
		writeFile(t, manifest, faultManifest(tool, effects, filepath.Join(dir, "notes.db"), credential, dir), 0o644)
		state := filepath.Join(dir, "state")
		args := []string{"run", "--json", "--plan", manifest, "--idempotency-key", "fault-" + strconv.Itoa(i), "--state", state, "--timeout", "60s", script}
		env := []string{"TMPDIR=" + tmp}

		// The kill: at a boundary (the Nth time it is reached) or, one
		// time in four, at a random moment.
		var how string
		cmd := exec.Command(bin, args...)
		if i%4 == 3 {
			delay := time.Duration(rng.IntN(1500)) * time.Millisecond
			how = "random " + delay.String()
			cmd.Env = append(os.Environ(), env...)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.AfterFunc(delay, func() { cmd.Process.Kill() })
			cmd.Wait()
		} else {
			point := faultBoundaries[rng.IntN(len(faultBoundaries))]
			nth := 1 + rng.IntN(6)
			how = fmt.Sprintf("%s#%d", point, nth)
			cmd.Env = append(os.Environ(), append(env, "APYSUP_FAILPOINT="+how)...)
			cmd.Run()
		}
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			killedPIDs = append(killedPIDs, cmd.Process.Pid)
			stats["killed"]++
		} else {
			stats["completed before the kill"]++
		}

		// Run again under the key until it completes (a run killed at
		// run_begun.before never began; one killed later resumes).
		var res faultResult
		for attempt := 0; ; attempt++ {
			if attempt == 3 {
				t.Fatalf("kill %d (%s): the run did not complete in 3 retries: %+v", i, how, res)
			}
			retry := exec.Command(bin, args...)
			retry.Env = append(os.Environ(), env...)
			out, _ := retry.Output()
			if err := json.Unmarshal(out, &res); err != nil {
				t.Fatalf("kill %d (%s): retry: %v\n%s", i, how, err, out)
			}
			if res.Status != "refused" && res.Status != "setup_failed" && res.Status != "killed" {
				break
			}
		}
		checkFaultRun(t, bin, i, how, state, effects, res, stats)
	}
	t.Logf("fault campaign: %d kills: %v", kills, stats)

	// A new supervisor sweeps what the killed ones left: their containers,
	// cgroups, mounts and run directories.
	final := exec.Command(bin, "run", "-c", "pass")
	final.Env = append(os.Environ(), "TMPDIR="+tmp)
	if out, err := final.CombinedOutput(); err != nil {
		t.Fatalf("a run after the campaign: %v\n%s", err, out)
	}
	checkSweptAfterKills(t, tmp, killedPIDs)
}

type faultResult struct {
	Status    string `json:"status"`
	ErrorCode string `json:"error_code"`
	Error     string `json:"error"`
	Stdout    string `json:"stdout"`
	Receipts  []struct {
		CallID     string `json:"call_id"`
		Capability string `json:"capability"`
		Outcome    string `json:"outcome"`
		Replayed   bool   `json:"replayed"`
	} `json:"receipts"`
	Idempotency struct {
		Attempt  int  `json:"attempt"`
		Replayed bool `json:"replayed"`
	} `json:"idempotency"`
}

func faultManifest(tool, effects, notes, credential, dir string) string {
	return `{"schema_version": "apysup.manifest.v1", "max_calls": 16,
 "capabilities": [
  {"name": "effects.append", "version": "1", "effect": "external", "playback": "live",
   "handler": {"kind": "exec", "id": "append", "version": "1", "config": {"argv": ["` + tool + `"], "env": {"EFFECTS": "` + effects + `"}}},
   "input_schema": {"type": "object", "properties": {"n": {"type": "string"}}, "required": ["n"]},
   "python": {"module": "effects", "function": "append"}},
  {"name": "notes.put", "version": "1", "effect": "write", "playback": "live",
   "handler": {"kind": "kv", "id": "put", "version": "1", "config": {"path": "` + notes + `", "op": "put"}},
   "input_schema": {"type": "object"},
   "python": {"module": "notes", "function": "put"}},
  {"name": "ledger.put", "version": "1", "effect": "write", "playback": "live", "acceptance": "strict",
   "handler": {"kind": "kv", "id": "ledger", "version": "1", "config": {"path": "` + filepath.Join(dir, "ledger.db") + `", "op": "put",
     "acceptance": "strict", "credential_file": "` + credential + `", "epoch_file": "` + filepath.Join(dir, "ledger.epochs.db") + `",
     "tenant": "fault", "subject": "campaign"}},
   "input_schema": {"type": "object"},
   "python": {"module": "ledger", "function": "put"}}
 ],
 "grants": [{"capability": "effects.append", "policy": {}}, {"capability": "notes.put", "policy": {}},
  {"capability": "ledger.put", "policy": {}}]}`
}

// checkFaultRun: no effect twice, every call answers completed, unknown or
// absent, every completed call is in the final result, the journal
// verifies.
func checkFaultRun(t *testing.T, bin string, i int, how, state, effects string, res faultResult, stats map[string]int) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("kill %d (%s): "+format, append([]any{i, how}, args...)...)
	}
	seen := map[string]bool{}
	if f, err := os.Open(effects); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if line := sc.Text(); line != "" {
				if seen[line] {
					fail("effect %s happened twice", line)
				}
				seen[line] = true
			}
		}
		f.Close()
	}
	out, err := exec.Command(bin, "journal", "show", "--json", "--state", state).Output()
	if err != nil {
		fail("journal show: %v", err)
	}
	var shown struct {
		Runs []struct {
			State string `json:"state"`
			Calls []struct {
				CallID  string `json:"call_id"`
				Answer  string `json:"answer"`
				Outcome string `json:"outcome"`
			} `json:"calls"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(out, &shown); err != nil || len(shown.Runs) != 1 || shown.Runs[0].State != "completed" {
		fail("journal show: %v %s", err, out)
	}
	inResult, capability := map[string]string{}, map[string]string{}
	for _, r := range res.Receipts {
		inResult[r.CallID], capability[r.CallID] = r.Outcome, r.Capability
		if r.Replayed {
			stats["replayed receipts"]++
		}
	}
	for _, c := range shown.Runs[0].Calls {
		stats["call "+c.Answer]++
		if capability[c.CallID] == "ledger.put" {
			// The provider can always answer here (its store is local):
			// a lost outcome is resolved by asking it, never left unknown.
			stats["strict call "+c.Answer]++
			if c.Answer == "unknown" || inResult[c.CallID] == "ambiguous" {
				fail("strict call %s stayed unknown (%s)", c.CallID, inResult[c.CallID])
			}
		}
		switch c.Answer {
		case "completed":
			if got, ok := inResult[c.CallID]; !ok || got != c.Outcome {
				fail("completed call %s (%s) is not in the result's receipts: %v", c.CallID, c.Outcome, inResult)
			}
		case "unknown":
			if inResult[c.CallID] != "ambiguous" {
				fail("unknown call %s: the result says %q", c.CallID, inResult[c.CallID])
			}
		case "absent":
		default:
			fail("call %s answers %q", c.CallID, c.Answer)
		}
	}
	if verify := exec.Command(bin, "journal", "verify", "--state", state); verify.Run() != nil {
		out, _ := exec.Command(bin, "journal", "verify", "--state", state).CombinedOutput()
		fail("journal verify: %s", out)
	}
	if strings.Count(res.Stdout, " ok") > 9 {
		fail("more than nine calls ok: %s", res.Stdout)
	}
}

// checkSweptAfterKills: no container, cgroup or mount of a killed
// supervisor remains, and its run directories are gone.
func checkSweptAfterKills(t *testing.T, tmp string, pids []int) {
	t.Helper()
	var left []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		left = left[:0]
		mounts, _ := os.ReadFile("/proc/self/mountinfo")
		for _, pid := range pids {
			prefix := fmt.Sprintf("apysup-%d-", pid)
			if strings.Contains(string(mounts), prefix) {
				left = append(left, "a mount of "+prefix)
			}
			for _, root := range []string{"/sys/fs/cgroup", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/pids", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified"} {
				matches, _ := filepath.Glob(filepath.Join(root, "*", prefix+"*"))
				more, _ := filepath.Glob(filepath.Join(root, prefix+"*"))
				for _, m := range append(matches, more...) {
					left = append(left, "cgroup "+m)
				}
			}
		}
		if strings.Contains(string(mounts), tmp+"/") {
			left = append(left, "a mount under "+tmp)
		}
		entries, _ := os.ReadDir(tmp)
		for _, e := range entries {
			left = append(left, "run directory "+e.Name())
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Fatalf("left behind by killed supervisors: %v", left)
	}
}

// buildFailpointCLI builds apysup with the failpoints compiled in.
func buildFailpointCLI(t *testing.T) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	testenv.Need(t, err == nil, "the go tool, to build apysup with -tags failpoints")
	bin := filepath.Join(t.TempDir(), "apysup-failpoints")
	cmd := exec.Command(goTool, "build", "-tags", "seccomp,failpoints", "-o", bin, "./cmd/apysup")
	cmd.Dir = testenv.CheckoutRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build -tags seccomp,failpoints: %v\n%s", err, out)
	}
	return bin
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}
