package plan

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Fields reports every problem with its path and the reader's code, never
// a value, and refuses the fields nobody read.
func TestFieldsReportsWithPaths(t *testing.T) {
	var problems Problems
	raw := json.RawMessage(`{"name":7,"n":99,"d":"1h","m":{"a":"b"},"s":["x"],"secret":"TOKEN-1","sub":{"x":1}}`)
	f := ReadFields("cfg", "invalid_config", raw, &problems)
	if f == nil {
		t.Fatal(problems)
	}
	f.Str("name", true)
	if got := f.IntegerIn("n", 5, 1, 10); got != 5 {
		t.Fatalf("out of range integer gave %d, want the default", got)
	}
	if got := f.Duration("d", time.Second, time.Millisecond, time.Minute); got != time.Second {
		t.Fatalf("duration %v", got)
	}
	if m, keys := f.StringMap("m"); m["a"] != "b" || len(keys) != 1 {
		t.Fatalf("%v %v", m, keys)
	}
	if s := f.Strings("s", true); len(s) != 1 {
		t.Fatal(s)
	}
	f.Str("missing", true)
	if sub := f.Sub("sub", true); sub != nil {
		sub.Done()
	}
	f.Done()
	want := map[string]bool{"cfg.name": true, "cfg.n": true, "cfg.d": true, "cfg.missing": true, "cfg.secret": true, "cfg.sub.x": true}
	for _, p := range problems {
		if p.Code != "invalid_config" || !want[p.Path] || strings.Contains(p.Error(), "TOKEN-1") {
			t.Errorf("problem %v", p)
		}
		delete(want, p.Path)
	}
	if len(want) != 0 {
		t.Fatalf("no problem at %v; got %v", want, problems)
	}
	for _, bad := range []string{`[1]`, `{"a":1,"a":2}`, `{`} {
		var ps Problems
		if ReadFields("x", "c", json.RawMessage(bad), &ps) != nil || len(ps) != 1 || ps[0].Path != "x" {
			t.Errorf("%s: %v", bad, ps)
		}
	}
	var ps Problems
	if f := ReadFields("x", "c", nil, &ps); f == nil || len(ps) != 0 {
		t.Fatalf("an absent config is {}: %v", ps)
	}
}
