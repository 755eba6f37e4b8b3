package regrtest

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/integration/internal/bothbackends"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/testenv"
)

var (
	flagAll     = flag.Bool("regrtest.all", false, "run every module of modules.txt (make regrtest), not only the fast ones")
	flagModules = flag.String("regrtest.modules", "", "run these modules (comma-separated) instead")
	flagUpdate  = flag.Bool("regrtest.update", false, "rewrite expected.txt from this run (make regrtest-update)")
	flagReport  = flag.String("regrtest.report", "", "write the Markdown table of the run to this file")
)

const (
	modulesFile  = "modules.txt"
	expectedFile = "expected.txt"
	driverFile   = "driver.py"
)

var backends = []string{supervisor.BackendNative, supervisor.BackendWazero}

func TestMain(m *testing.M) { suite.Main(m) }

// The one Supervisor of the test binary (integration/internal/bothbackends).
var suite = bothbackends.Suite{StatePrefix: "apysup-r"}

// need returns the Supervisor, or stops the test when a side cannot run:
// the native backend, the WASI build, or the testsuite package is missing
// (a skip locally, a failure under APYSUP_REQUIRE_ALL=1).
func need(t *testing.T) *supervisor.Supervisor {
	t.Helper()
	sup := suite.Need(t)
	_, errSuite := os.Stat(filepath.Join(testsuiteDir(), "test_bisect.py"))
	_, errSupport := os.Stat(filepath.Join(stdlibTestDir, "support", "__init__.py"))
	testenv.Need(t, errSuite == nil && errSupport == nil,
		"CPython's test modules in "+testsuiteDir()+" (Debian's libpython3.11-testsuite: make deps; or APYSUP_REGRTEST_TESTSUITE=DIR)")
	return sup
}

// moduleResult is one module on the three sides.
type moduleResult struct {
	module string
	runs   map[string]moduleRun // "bare", "native", "wazero"
	diffs  []difference
}

// TestRegrtest runs the chosen modules bare, natively and under wazero,
// two modules at a time (-parallel), and checks every difference against
// expected.txt (or rewrites it with -regrtest.update).
func TestRegrtest(t *testing.T) {
	sup := need(t)
	all, fast, err := readModules(modulesFile)
	if err != nil {
		t.Fatal(err)
	}
	modules := fast
	switch {
	case *flagModules != "":
		modules = strings.Split(*flagModules, ",")
	case *flagAll:
		modules = all
	}
	for _, m := range modules {
		if !slices.Contains(all, m) {
			t.Fatalf("module %s is not in %s", m, modulesFile)
		}
	}
	exp, err := readExpectations(expectedFile)
	if err != nil {
		t.Fatal(err)
	}
	driver, err := filepath.Abs(driverFile)
	if err != nil {
		t.Fatal(err)
	}
	seed := t.TempDir()
	if err := buildSeed(seed, modules); err != nil {
		t.Fatal(err)
	}

	began := time.Now()
	var mu sync.Mutex
	results := map[string]*moduleResult{}
	t.Run("modules", func(t *testing.T) {
		for _, m := range modules {
			t.Run(m, func(t *testing.T) {
				t.Parallel()
				r := &moduleResult{module: m, runs: map[string]moduleRun{}}
				ctx := context.Background()
				r.runs["bare"] = runBare(ctx, driver, seed, m)
				for _, b := range backends {
					r.runs[b] = runConfined(ctx, sup, b, driver, seed, m)
					r.diffs = append(r.diffs, differences(b, m, r.runs["bare"].Tests, r.runs[b].Tests)...)
				}
				if bare := r.runs["bare"].Tests[m]; bare.Outcome == "error" {
					t.Errorf("%s does not run bare: %s", m, bare.Detail)
				}
				mu.Lock()
				results[m] = r
				mu.Unlock()
				t.Logf("%s: bare %.1fs, native %.1fs, wazero %.1fs (wall %s, %s, %s); %d differences", m,
					r.runs["bare"].Seconds, r.runs["native"].Seconds, r.runs["wazero"].Seconds,
					r.runs["bare"].wall.Round(time.Second), r.runs["native"].wall.Round(time.Second),
					r.runs["wazero"].wall.Round(time.Second), len(r.diffs))
				for i, d := range r.diffs {
					if i == 20 {
						t.Logf("  ... and %d more", len(r.diffs)-i)
						break
					}
					t.Logf("  %s %s: bare %s, %s (%s)", d.backend, d.id, d.bare, d.got, d.detail)
				}
			})
		}
	})
	wall := time.Since(began)
	if len(results) != len(modules) {
		t.Fatalf("%d of %d modules ran", len(results), len(modules))
	}

	covered := ran{}
	var diffs []difference
	for _, m := range modules {
		for _, b := range backends {
			covered[ranKey(b, m)] = true
		}
		diffs = append(diffs, results[m].diffs...)
	}
	if *flagUpdate {
		exp.update(covered, diffs)
		if err := exp.write(expectedFile); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range exp.entries {
			if e.cause == unexplained {
				n++
			}
		}
		t.Logf("rewrote %s: %d entries, %d UNEXPLAINED", expectedFile, len(exp.entries), n)
	}
	problems, causeOf := exp.check(covered, diffs)
	for _, p := range problems {
		t.Error(p)
	}
	table := renderTable(modules, results, exp, causeOf, wall)
	t.Log("\n" + table)
	if *flagReport != "" {
		if err := os.WriteFile(*flagReport, []byte(table), 0o644); err != nil {
			t.Error(err)
		}
	}
}

// renderTable is the Markdown table of docs/parity.md: per module, the
// tests that pass bare, the share of them that pass on each backend, the
// differences by cause, and the in-guest time of each side with the
// backends' ratios to bare.
func renderTable(modules []string, results map[string]*moduleResult, exp *expectations, causeOf map[string]string, wall time.Duration) string {
	var b strings.Builder
	b.WriteString("| module | tests (bare) | pass bare | native | wazero | native differences | wazero differences | bare s | native x | wazero x |\n")
	b.WriteString("| --- | ---: | ---: | ---: | ---: | --- | --- | ---: | ---: | ---: |\n")
	var totalTests, totalPass int
	kept := map[string]int{}
	var secs = map[string]float64{}
	for _, m := range modules {
		r := results[m]
		bare := r.runs["bare"]
		tests, pass := 0, 0
		for id, o := range bare.Tests {
			if id == m {
				continue
			}
			tests++
			if passing(o.Outcome) {
				pass++
			}
		}
		totalTests += tests
		totalPass += pass
		cells := []string{m, fmt.Sprint(tests), fmt.Sprint(pass)}
		for _, side := range backends {
			k := 0
			for id, o := range bare.Tests {
				if passing(o.Outcome) && passing(r.runs[side].Tests[id].Outcome) {
					k++
				}
			}
			kept[side] += k
			cells = append(cells, percent(k, pass))
		}
		for _, side := range backends {
			byCause := map[string]int{}
			for _, d := range r.diffs {
				if d.backend == side {
					c := causeOf[d.key()]
					if c == "" {
						c = "?"
					}
					byCause[c] += max(1, d.folded)
				}
			}
			cells = append(cells, countsString(byCause))
		}
		cells = append(cells, fmt.Sprintf("%.2f", bare.Seconds))
		secs["bare"] += bare.Seconds
		for _, side := range backends {
			secs[side] += r.runs[side].Seconds
			cells = append(cells, ratio(r.runs[side].Seconds, bare.Seconds))
		}
		b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
	}
	fmt.Fprintf(&b, "| **all %d** | %d | %d | %s | %s | | | %.1f | %s | %s |\n", len(modules), totalTests, totalPass,
		percent(kept["native"], totalPass), percent(kept["wazero"], totalPass), secs["bare"],
		ratio(secs["native"], secs["bare"]), ratio(secs["wazero"], secs["bare"]))
	fmt.Fprintf(&b, "\nWall time of the whole run (%d modules, three sides each, two modules at a time): %s.\n", len(modules), wall.Round(time.Second))
	if len(exp.order) > 0 {
		b.WriteString("\nCauses: " + strings.Join(exp.order, ", ") + " (expected.txt says what each is).\n")
	}
	return b.String()
}

func percent(k, n int) string {
	if n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(k)/float64(n))
}

func ratio(x, base float64) string {
	if base <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", x/base)
}

// countsString is "cause n, ..." by descending count, or "" for none.
func countsString(m map[string]int) string {
	keys := slices.Collect(mapKeys(m))
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}
