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
// native guest's: every O_ and POSIX_FADV_ name of its os module with the
// same value, and the clocks WASI has with the same ids.
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
	for name, got := range tables["clock_names"] {
		if want, ok := native.Time[name]; !ok || got != want {
			t.Errorf("time.%s: %d in _apysup_flags.c, %d natively (present %v)", name, got, want, ok)
		}
	}
	if len(tables["clock_names"]) != 4 {
		t.Errorf("clock_names has %d clocks, want WASI's 4", len(tables["clock_names"]))
	}
}
