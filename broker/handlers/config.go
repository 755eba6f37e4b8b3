package handlers

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// fields reads one JSON object of host configuration (a handler config or
// a grant policy) strictly: every problem is recorded with its JSON path,
// and fields nobody asked for are refused by done. Messages never echo the
// values: a config may hold secrets (headers, environment).
type fields struct {
	path     string
	code     string
	values   map[string]json.RawMessage
	used     map[string]bool
	problems *plan.Problems
}

func readFields(path, code string, raw json.RawMessage, problems *plan.Problems) *fields {
	f := &fields{path: path, code: code, used: map[string]bool{}, problems: problems}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	if err := canonjson.Validate(raw, canonjson.MaxHostBytes); err != nil {
		f.problem("", "must be strict JSON ("+canonjson.CodeOf(err)+")")
		return nil
	}
	if err := json.Unmarshal(raw, &f.values); err != nil || f.values == nil {
		f.problem("", "must be a JSON object")
		return nil
	}
	return f
}

func (f *fields) at(key string) string {
	if key == "" {
		return f.path
	}
	return f.path + "." + key
}

func (f *fields) problem(key, message string) {
	*f.problems = append(*f.problems, problem(f.code, f.at(key), message))
}

func (f *fields) get(key string, required bool) (json.RawMessage, bool) {
	f.used[key] = true
	v, ok := f.values[key]
	if !ok && required {
		f.problem(key, "is required")
	}
	return v, ok
}

func (f *fields) str(key string, required bool) string {
	raw, ok := f.get(key, required)
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.problem(key, "must be a string")
	}
	return s
}

func (f *fields) strings(key string, required bool) []string {
	raw, ok := f.get(key, required)
	if !ok {
		return nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		f.problem(key, "must be an array of strings")
		return nil
	}
	return out
}

// stringMap returns the object at key and its keys in sorted order.
func (f *fields) stringMap(key string) (map[string]string, []string) {
	raw, ok := f.get(key, false)
	if !ok {
		return nil, nil
	}
	var out map[string]string
	if err := json.Unmarshal(raw, &out); err != nil || out == nil {
		f.problem(key, "must be an object of strings")
		return nil, nil
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return out, keys
}

// integer returns the integer at key, def when absent.
func (f *fields) integer(key string, def, lo, hi int64) int64 {
	raw, ok := f.get(key, false)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < lo || n > hi {
		f.problem(key, fmt.Sprintf("must be an integer in %d..%d", lo, hi))
		return def
	}
	return n
}

// duration returns the Go duration string at key ("5s", "250ms"), def when absent.
func (f *fields) duration(key string, def, lo, hi time.Duration) time.Duration {
	raw, ok := f.get(key, false)
	if !ok {
		return def
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.problem(key, "must be a duration string such as \"5s\"")
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < lo || d > hi {
		f.problem(key, fmt.Sprintf("must be a duration in %s..%s", lo, hi))
		return def
	}
	return d
}

// done refuses every field nobody read, in a stable order.
func (f *fields) done() {
	var extra []string
	for k := range f.values {
		if !f.used[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		f.problem(k, "unknown field")
	}
}
