package regrtest

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// outcome is one test id's ending, as driver.py reports it.
type outcome struct {
	Outcome string `json:"outcome"` // pass fail error skip xfail xpass
	Detail  string `json:"detail"`
}

// passing outcomes count as a pass in the table.
func passing(o string) bool { return o == "pass" || o == "xfail" }

// absent is the outcome of a test id one side never reported.
const absent = "absent"

// difference is one test id that ends otherwise on a backend than bare.
type difference struct {
	backend, module, id string
	bare, got           string
	detail              string // the backend's (or else bare's) detail
	folded              int    // bare's tests that a module-level entry stands for
}

// differences compares one module's outcomes on a backend with bare's. A
// module-level entry (the id is the module's name: it did not import, or
// its run produced no report) stands for every test of the other side it
// hides, which are then not listed one by one.
func differences(backend, module string, bare, got map[string]outcome) []difference {
	var out []difference
	ids := map[string]bool{}
	for id := range bare {
		ids[id] = true
	}
	for id := range got {
		ids[id] = true
	}
	_, bareModule := bare[module]
	_, gotModule := got[module]
	folded := 0
	for _, id := range slices.Sorted(mapKeys(ids)) {
		b, inBare := bare[id]
		g, inGot := got[id]
		switch {
		case id != module && !inGot && gotModule && !bareModule:
			folded++
			continue
		case id != module && !inBare && bareModule && !gotModule:
			continue
		}
		bo, gotO := absent, absent
		if inBare {
			bo = b.Outcome
		}
		if inGot {
			gotO = g.Outcome
		}
		if bo == gotO {
			continue
		}
		detail := g.Detail
		if detail == "" {
			detail = b.Detail
		}
		out = append(out, difference{backend: backend, module: module, id: id, bare: bo, got: gotO, detail: detail})
	}
	for i := range out {
		if out[i].id == module && gotModule && !bareModule {
			out[i].folded = folded
		}
	}
	return out
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// The expectation file, expected.txt: a header, then three sections of
// tab-separated lines ('#' starts a comment line).
//
//	[causes]       name  kind  explanation      (kind: confinement, wasi or bug)
//	[rules]        backend  id-regexp  detail-regexp  cause
//	[differences]  backend  module  test-id  bare  got  cause  detail
//
// got may be several outcomes separated by "|" (a test that ends either
// way). The detail column is informational (the backend's one-line reason)
// and is not compared. Rules are used only by -regrtest.update, to name
// the cause of a new difference; the first that matches wins (backend "*"
// matches both).
type expectations struct {
	prefix  []string // every line before [differences], kept verbatim on update
	causes  map[string]cause
	order   []string // cause names in file order
	rules   []rule
	entries []entry
}

type cause struct{ name, kind, text string }

type rule struct {
	backend    string
	id, detail *regexp.Regexp
	cause      string
}

type entry struct {
	backend, module, id, bare string
	got                       []string
	cause, detail             string
}

// unexplained is the cause -regrtest.update gives a difference it cannot
// explain; the run fails until a human names the cause.
const unexplained = "UNEXPLAINED"

var causeKinds = []string{"confinement", "wasi", "bug"}

func (e entry) key() string { return e.backend + "\t" + e.id }

func (d difference) key() string { return d.backend + "\t" + d.id }

func readExpectations(path string) (*expectations, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	exp := &expectations{causes: map[string]cause{}}
	section := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<16), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		bad := func(format string, args ...any) error {
			return fmt.Errorf("%s:%d: %s", path, n, fmt.Sprintf(format, args...))
		}
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.Trim(line, "[]")
			if !slices.Contains([]string{"causes", "rules", "differences"}, section) {
				return nil, bad("unknown section %s", line)
			}
		}
		if section != "differences" {
			exp.prefix = append(exp.prefix, line)
		}
		if strings.HasPrefix(line, "[") || strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.Split(line, "\t")
		switch section {
		case "causes":
			if len(fields) != 3 || !slices.Contains(causeKinds, fields[1]) || fields[2] == "" {
				return nil, bad("a cause is name<TAB>kind (%s)<TAB>explanation", strings.Join(causeKinds, ", "))
			}
			if _, dup := exp.causes[fields[0]]; dup || fields[0] == unexplained {
				return nil, bad("cause %s defined twice or reserved", fields[0])
			}
			exp.causes[fields[0]] = cause{fields[0], fields[1], fields[2]}
			exp.order = append(exp.order, fields[0])
		case "rules":
			if len(fields) != 4 {
				return nil, bad("a rule is backend<TAB>id-regexp<TAB>detail-regexp<TAB>cause")
			}
			id, err1 := regexp.Compile(fields[1])
			detail, err2 := regexp.Compile(fields[2])
			if err1 != nil || err2 != nil {
				return nil, bad("bad regexp")
			}
			if _, ok := exp.causes[fields[3]]; !ok {
				return nil, bad("rule names an undefined cause %s", fields[3])
			}
			exp.rules = append(exp.rules, rule{fields[0], id, detail, fields[3]})
		case "differences":
			if len(fields) != 7 {
				return nil, bad("a difference is backend<TAB>module<TAB>id<TAB>bare<TAB>got<TAB>cause<TAB>detail")
			}
			e := entry{backend: fields[0], module: fields[1], id: fields[2], bare: fields[3],
				got: strings.Split(fields[4], "|"), cause: fields[5], detail: fields[6]}
			if _, ok := exp.causes[e.cause]; !ok && e.cause != unexplained {
				return nil, bad("undefined cause %s", e.cause)
			}
			if e.backend != "native" && e.backend != "wazero" {
				return nil, bad("backend %q: native or wazero", e.backend)
			}
			exp.entries = append(exp.entries, e)
		default:
			return nil, bad("a line outside any section")
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, e := range exp.entries {
		if seen[e.key()] {
			return nil, fmt.Errorf("%s: %s listed twice", path, strings.ReplaceAll(e.key(), "\t", " "))
		}
		seen[e.key()] = true
	}
	return exp, nil
}

// ran says which (backend, module) pairs a run covered: only their entries
// are checked, or replaced on update.
type ran map[string]bool

func ranKey(backend, module string) string { return backend + "\t" + module }

// check compares the differences of a run with the file: every problem is
// one message. cause maps each difference's key to the cause it has.
func (exp *expectations) check(covered ran, diffs []difference) (problems []string, causeOf map[string]string) {
	byKey := map[string]entry{}
	for _, e := range exp.entries {
		byKey[e.key()] = e
	}
	causeOf = map[string]string{}
	seen := map[string]bool{}
	for _, d := range diffs {
		seen[d.key()] = true
		e, ok := byKey[d.key()]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("new difference: %s %s: bare %s, %s %s (%s)", d.backend, d.id, d.bare, d.backend, d.got, d.detail))
		case e.bare != d.bare || !slices.Contains(e.got, d.got):
			problems = append(problems, fmt.Sprintf("changed difference: %s %s: bare %s, %s %s; expected bare %s, %s %s (%s)",
				d.backend, d.id, d.bare, d.backend, d.got, e.bare, d.backend, strings.Join(e.got, "|"), d.detail))
		case e.cause == unexplained:
			problems = append(problems, fmt.Sprintf("unexplained difference: %s %s: bare %s, %s %s (%s): name its cause in expected.txt",
				d.backend, d.id, d.bare, d.backend, d.got, d.detail))
		default:
			causeOf[d.key()] = e.cause
		}
	}
	for _, e := range exp.entries {
		if covered[ranKey(e.backend, e.module)] && !seen[e.key()] {
			problems = append(problems, fmt.Sprintf("stale difference: %s %s (bare %s, %s %s, cause %s) no longer happens: remove it (make regrtest-update)",
				e.backend, e.id, e.bare, e.backend, strings.Join(e.got, "|"), e.cause))
		}
	}
	sort.Strings(problems)
	return problems, causeOf
}

// update replaces the entries of the covered pairs by the run's
// differences: an entry that still applies, for the same reason (its
// detail), keeps its cause (and its set of outcomes); a new or changed one
// takes the first matching rule's cause, or UNEXPLAINED. A test that ends
// as before for another reason (a skip that now wants a subprocess where
// it wanted os.getegid) is a changed one.
func (exp *expectations) update(covered ran, diffs []difference) {
	old := map[string]entry{}
	var kept []entry
	for _, e := range exp.entries {
		if covered[ranKey(e.backend, e.module)] {
			old[e.key()] = e
		} else {
			kept = append(kept, e)
		}
	}
	for _, d := range diffs {
		e := entry{backend: d.backend, module: d.module, id: d.id, bare: d.bare, got: []string{d.got}, cause: unexplained, detail: d.detail}
		if o, ok := old[d.key()]; ok && o.bare == d.bare && slices.Contains(o.got, d.got) && o.detail == fileDetail(d.detail) && o.cause != unexplained {
			e.got, e.cause = o.got, o.cause
		} else if c := exp.ruleFor(d); c != "" {
			e.cause = c
		}
		kept = append(kept, e)
	}
	sort.Slice(kept, func(i, j int) bool {
		a, b := kept[i], kept[j]
		if a.backend != b.backend {
			return a.backend < b.backend
		}
		if a.module != b.module {
			return a.module < b.module
		}
		return a.id < b.id
	})
	exp.entries = kept
}

func (exp *expectations) ruleFor(d difference) string {
	for _, r := range exp.rules {
		if (r.backend == "*" || r.backend == d.backend) && r.id.MatchString(d.id) && r.detail.MatchString(d.detail) {
			return r.cause
		}
	}
	return ""
}

func (exp *expectations) write(path string) error {
	var b strings.Builder
	for _, line := range exp.prefix {
		b.WriteString(line + "\n")
	}
	b.WriteString("[differences]\n# backend\tmodule\ttest id\tbare\tgot\tcause\tdetail (informational)\n")
	for _, e := range exp.entries {
		fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.backend, e.module, e.id, e.bare, strings.Join(e.got, "|"), e.cause, fileDetail(e.detail))
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

// fileDetail is a difference's detail as expected.txt holds it: one line,
// at most 160 bytes.
func fileDetail(detail string) string {
	detail = strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' {
			return ' '
		}
		return r
	}, detail)
	if len(detail) > 160 {
		detail = strings.ToValidUTF8(detail[:160], "")
	}
	return detail
}
