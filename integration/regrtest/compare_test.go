package regrtest

import (
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var flagRules = flag.Bool("regrtest.rules", false, "TestExpectationsFile: give every UNEXPLAINED entry of expected.txt the cause of its first matching rule, without running anything")

func outcomes(pairs ...string) map[string]outcome {
	m := map[string]outcome{}
	for i := 0; i < len(pairs); i += 2 {
		m[pairs[i]] = outcome{Outcome: pairs[i+1], Detail: "why " + pairs[i]}
	}
	return m
}

func TestDifferences(t *testing.T) {
	bare := outcomes("m.A.a", "pass", "m.A.b", "skip", "m.A.c", "fail", "m.A.d", "pass")
	got := outcomes("m.A.a", "pass", "m.A.b", "pass", "m.A.c", "error", "m.A.e", "pass")
	var lines []string
	for _, d := range differences("wazero", "m", bare, got) {
		lines = append(lines, d.id+" "+d.bare+">"+d.got)
	}
	want := []string{"m.A.b skip>pass", "m.A.c fail>error", "m.A.d pass>absent", "m.A.e absent>pass"}
	if !slices.Equal(lines, want) {
		t.Errorf("differences %q, want %q", lines, want)
	}

	// A module that does not import on the backend is one difference,
	// standing for every test bare ran.
	ds := differences("wazero", "m", bare, outcomes("m", "skip"))
	if len(ds) != 1 || ds[0].id != "m" || ds[0].bare != absent || ds[0].got != "skip" || ds[0].folded != 4 {
		t.Errorf("folded module: %+v", ds)
	}
	// And the other way round: nothing is listed test by test.
	ds = differences("native", "m", outcomes("m", "skip"), got)
	if len(ds) != 1 || ds[0].id != "m" || ds[0].got != absent {
		t.Errorf("module skipped bare: %+v", ds)
	}
}

const sampleFile = "# header\n\n[causes]\n# comment\nthreads\twasi\tWASI has no threads.\nutime\tbug\tutimensat(NULL) sets the epoch.\n\n" +
	"[rules]\nwazero\t.*\tcan't start new thread\tthreads\n\n[differences]\n" +
	"wazero\tm\tm.A.a\tpass\terror|fail\tthreads\tRuntimeError\n" +
	"wazero\tm\tm.A.b\tpass\tfail\tutime\t\n" +
	"native\tm\tm.A.c\tpass\tfail\tUNEXPLAINED\t\n" +
	"wazero\tn\tn.A.a\tpass\tskip\tthreads\t\n"

func writeSample(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "expected.txt")
	if err := os.WriteFile(p, []byte(sampleFile), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheck(t *testing.T) {
	exp, err := readExpectations(writeSample(t))
	if err != nil {
		t.Fatal(err)
	}
	covered := ran{ranKey("wazero", "m"): true, ranKey("native", "m"): true}
	diffs := []difference{
		{backend: "wazero", module: "m", id: "m.A.a", bare: "pass", got: "fail"},    // listed (one of two)
		{backend: "native", module: "m", id: "m.A.c", bare: "pass", got: "fail"},    // listed, unexplained
		{backend: "wazero", module: "m", id: "m.A.x", bare: "pass", got: "error"},   // new
		{backend: "native", module: "m", id: "m.A.a", bare: "skip", got: "absent"},  // new (other backend)
		{backend: "wazero", module: "m", id: "m.A.b", bare: "skip", got: "fail"},    // changed
		{backend: "wazero", module: "n", id: "n.A.b", bare: "pass", got: "skip"},    // n did not run: new anyway
		{backend: "wazero", module: "m", id: "m.A.zz", bare: "pass", got: "absent"}, // new
	}
	problems, causeOf := exp.check(covered, diffs[:6])
	var kinds []string
	for _, p := range problems {
		kind, _, _ := strings.Cut(p, ":")
		kinds = append(kinds, kind)
	}
	slices.Sort(kinds)
	want := []string{"changed difference", "new difference", "new difference", "new difference", "unexplained difference"}
	if !slices.Equal(kinds, want) {
		t.Errorf("problems %q, want kinds %q", problems, want)
	}
	if causeOf["wazero\tm.A.a"] != "threads" || len(causeOf) != 1 {
		t.Errorf("causes %v", causeOf)
	}

	// An entry of a covered pair that no longer happens is stale; one of
	// a pair that did not run is not looked at.
	problems, _ = exp.check(covered, nil)
	stale := 0
	for _, p := range problems {
		if strings.HasPrefix(p, "stale difference") {
			stale++
		}
		if strings.Contains(p, "n.A.a") {
			t.Errorf("an entry of a module that did not run was checked: %s", p)
		}
	}
	if stale != 3 {
		t.Errorf("%d stale, want 3: %q", stale, problems)
	}
}

func TestUpdate(t *testing.T) {
	path := writeSample(t)
	exp, err := readExpectations(path)
	if err != nil {
		t.Fatal(err)
	}
	// Two tests that end as before, for another reason.
	exp.entries = append(exp.entries,
		entry{backend: "wazero", module: "m", id: "m.A.r", bare: "pass", got: []string{"skip"}, cause: "utime", detail: "needs utime"},
		entry{backend: "wazero", module: "m", id: "m.A.s", bare: "pass", got: []string{"skip"}, cause: "utime", detail: "needs utime"})
	covered := ran{ranKey("wazero", "m"): true, ranKey("native", "m"): true}
	exp.update(covered, []difference{
		{backend: "wazero", module: "m", id: "m.A.a", bare: "pass", got: "error", detail: "RuntimeError"}, // still applies
		{backend: "wazero", module: "m", id: "m.A.r", bare: "pass", got: "skip", detail: "can't start new thread"},
		{backend: "wazero", module: "m", id: "m.A.s", bare: "pass", got: "skip", detail: "needs something else"},
		{backend: "wazero", module: "m", id: "m.A.b", bare: "pass", got: "skip", detail: "x"}, // changed
		{backend: "wazero", module: "m", id: "m.A.t", bare: "pass", got: "error", detail: "RuntimeError: can't start new thread"},
		{backend: "native", module: "m", id: "m.A.c", bare: "pass", got: "fail", detail: "still unknown"},
	})
	if err := exp.write(path); err != nil {
		t.Fatal(err)
	}
	again, err := readExpectations(path)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, e := range again.entries {
		got[e.key()] = strings.Join(e.got, "|") + " " + e.cause
	}
	want := map[string]string{
		"wazero\tm.A.a": "error|fail threads", // kept, with its set of outcomes
		"wazero\tm.A.b": "skip UNEXPLAINED",   // changed: no rule matches
		"wazero\tm.A.t": "error threads",      // new: the rule names it
		"wazero\tm.A.r": "skip threads",       // another reason: the rule's cause
		"wazero\tm.A.s": "skip UNEXPLAINED",   // another reason no rule names
		"native\tm.A.c": "fail UNEXPLAINED",   // still unexplained
		"wazero\tn.A.a": "skip threads",       // n did not run: kept as it was
	}
	if len(got) != len(want) {
		t.Errorf("entries %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%q: %q, want %q", k, got[k], v)
		}
	}
	if len(again.prefix) != len(exp.prefix) || again.causes["utime"].kind != "bug" {
		t.Errorf("the causes and rules were not kept: %q", again.prefix)
	}
}

func TestReadExpectationsRejects(t *testing.T) {
	for name, body := range map[string]string{
		"unknown kind":    "[causes]\nx\tmaybe\ttext\n",
		"undefined cause": "[causes]\n[differences]\nwazero\tm\tm.a\tpass\tfail\tnope\t\n",
		"short line":      "[differences]\nwazero\tm\tm.a\tpass\n",
		"bad backend":     "[causes]\nx\twasi\tt\n[differences]\nbare\tm\tm.a\tpass\tfail\tx\t\n",
		"twice":           "[causes]\nx\twasi\tt\n[differences]\nwazero\tm\tm.a\tpass\tfail\tx\t\nwazero\tm\tm.a\tpass\tskip\tx\t\n",
		"rule cause":      "[causes]\n[rules]\n*\t.\t.\tnope\n",
		"bad regexp":      "[causes]\nx\twasi\tt\n[rules]\n*\t(\t.\tx\n",
		"outside":         "stray\n",
		"unknown section": "[extra]\n",
	} {
		p := filepath.Join(t.TempDir(), "e.txt")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := readExpectations(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestExpectationsFile checks the checked-in files without running
// anything: expected.txt parses, every entry is of a module of
// modules.txt; causes that explain nothing are logged. With -regrtest.rules it first
// gives UNEXPLAINED entries the cause of their first matching rule.
func TestExpectationsFile(t *testing.T) {
	all, fast, err := readModules(modulesFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(fast) == 0 {
		t.Error("modules.txt marks no module fast: make test would run nothing")
	}
	exp, err := readExpectations(expectedFile)
	if err != nil {
		t.Fatal(err)
	}
	if *flagRules {
		for i, e := range exp.entries {
			if e.cause == unexplained {
				if c := exp.ruleFor(difference{backend: e.backend, id: e.id, detail: e.detail}); c != "" {
					exp.entries[i].cause = c
				}
			}
		}
		if err := exp.write(expectedFile); err != nil {
			t.Fatal(err)
		}
	}
	used := map[string]bool{}
	for _, e := range exp.entries {
		used[e.cause] = true
		if !slices.Contains(all, e.module) {
			t.Errorf("%s: module %s is not in %s", expectedFile, e.module, modulesFile)
		}
	}
	// A cause no entry uses is reported, not failed: rules may name it
	// for differences a fix has removed, until its lines are deleted.
	for _, c := range exp.order {
		if !used[c] {
			t.Logf("%s: cause %s explains no difference", expectedFile, c)
		}
	}
	if used[unexplained] {
		t.Logf("%s has UNEXPLAINED entries: TestRegrtest fails on them", expectedFile)
	}
}
