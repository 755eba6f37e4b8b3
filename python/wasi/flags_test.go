package wasi

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestFlagValuesAreTheNativeGuests: the open flags, advice and clock ids
// the WASI build's os and time modules export (_apysup_flags.c) are the
// native guest's: every O_ and POSIX_FADV_ name of its os module, and
// every CLOCK_ name of its time module, with the same value.
func TestFlagValuesAreTheNativeGuests(t *testing.T) {
	var native struct{ OS, Time map[string]int64 }
	askNativeGuest(t, `
import json, os, time
print(json.dumps({"os": {n: getattr(os, n) for n in dir(os) if n.startswith(("O_", "POSIX_FADV_"))},
                  "time": {n: getattr(time, n) for n in dir(time) if n.startswith("CLOCK_")}}))
`, &native)
	src, err := os.ReadFile("_apysup_flags.c")
	if err != nil {
		t.Fatal(err)
	}
	begin, end := strings.Index(string(src), "/* BEGIN LINUX VALUES"), strings.Index(string(src), "/* END LINUX VALUES */")
	if begin < 0 || end < begin {
		t.Fatal("_apysup_flags.c has no LINUX VALUES block")
	}
	block := string(src[begin:end])
	macros := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^#define (L_\w+) (0[0-7]*)\b`).FindAllStringSubmatch(block, -1) {
		v, err := strconv.ParseInt(m[2], 8, 64)
		if err != nil {
			t.Fatal(err)
		}
		macros[m[1]] = v
	}
	eval := func(expr string) int64 {
		var v int64
		for _, term := range strings.Split(expr, "|") {
			term = strings.TrimSpace(term)
			if n, err := strconv.ParseInt(term, 0, 64); err == nil {
				v |= n
			} else if n, ok := macros[term]; ok {
				v |= n
			} else {
				t.Fatalf("_apysup_flags.c: cannot read %q", term)
			}
		}
		return v
	}
	tables := map[string]map[string]int64{"open_names": {}, "clock_names": {}}
	for name, table := range tables {
		i := strings.Index(block, name+"[] = {")
		if i < 0 {
			t.Fatalf("_apysup_flags.c has no %s table", name)
		}
		body := block[i : i+strings.Index(block[i:], "};")]
		for _, m := range regexp.MustCompile(`\{"(\w+)", ([^}]+)\}`).FindAllStringSubmatch(body, -1) {
			table[m[1]] = eval(m[2])
		}
	}
	if len(tables["open_names"]) != len(native.OS) {
		t.Errorf("open_names has %d names, the native os module %d", len(tables["open_names"]), len(native.OS))
	}
	for name, want := range native.OS {
		if got, ok := tables["open_names"][name]; !ok || got != want {
			t.Errorf("os.%s: %d in _apysup_flags.c (present %v), %d natively", name, got, ok, want)
		}
	}
	if len(tables["clock_names"]) != len(native.Time) {
		t.Errorf("clock_names has %d clocks, the native time module %d", len(tables["clock_names"]), len(native.Time))
	}
	for name, want := range native.Time {
		if got, ok := tables["clock_names"][name]; !ok || got != want {
			t.Errorf("time.%s: %d in _apysup_flags.c (present %v), %d natively", name, got, ok, want)
		}
	}
}

// TestPollBitsAreTheNativeGuests: include/poll.h gives the WASI build's
// select module (and every caller of poll) the native guest's event bits:
// every POLL name of its select module, with the same value.
func TestPollBitsAreTheNativeGuests(t *testing.T) {
	var native map[string]int64
	askNativeGuest(t, `
import json, select
print(json.dumps({n: getattr(select, n) for n in dir(select) if n.startswith("POLL")}))
`, &native)
	src, err := os.ReadFile("include/poll.h")
	if err != nil {
		t.Fatal(err)
	}
	ours := map[string]int64{}
	for _, m := range regexp.MustCompile(`(?m)^#define (POLL\w+) (0x[0-9a-f]+)$`).FindAllStringSubmatch(string(src), -1) {
		v, err := strconv.ParseInt(m[2], 0, 64)
		if err != nil {
			t.Fatal(err)
		}
		ours[m[1]] = v
	}
	if len(ours) != len(native) {
		t.Errorf("include/poll.h defines %d bits, the native select module %d", len(ours), len(native))
	}
	for name, want := range native {
		if got, ok := ours[name]; !ok || got != want {
			t.Errorf("select.%s: %#x in include/poll.h (present %v), %#x natively", name, got, ok, want)
		}
	}
}
