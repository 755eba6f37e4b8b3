package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/apysup/apysup/internal/canonjson"
)

// Fields reads one JSON object of host-authored configuration (a manifest
// entry, a handler config, a grant policy) strictly: every problem is
// recorded with its JSON path and one code, and the fields nobody asked
// for are refused by Done. Messages never echo values: a config may hold
// secrets (headers, environment).
type Fields struct {
	path     string
	code     string
	values   map[string]json.RawMessage
	used     map[string]bool
	problems *Problems
}

// ReadFields starts reading raw (empty means {}) at path. It records a
// problem and returns nil when raw is not a strict JSON object.
func ReadFields(path, code string, raw json.RawMessage, problems *Problems) *Fields {
	f := &Fields{path: path, code: code, used: map[string]bool{}, problems: problems}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	if err := canonjson.Validate(raw, canonjson.MaxHostBytes); err != nil {
		f.Problem("", "must be strict JSON ("+canonjson.CodeOf(err)+")")
		return nil
	}
	if err := json.Unmarshal(raw, &f.values); err != nil || f.values == nil {
		f.Problem("", "must be a JSON object")
		return nil
	}
	return f
}

// At is the JSON path of key ("" for the object itself).
func (f *Fields) At(key string) string {
	switch {
	case key == "":
		return f.path
	case f.path == "":
		return key
	}
	return f.path + "." + key
}

// Problem records a problem at key with the reader's code.
func (f *Fields) Problem(key, message string) {
	*f.problems = append(*f.problems, &Error{Code: f.code, Path: f.At(key), Message: message})
}

// Has reports whether key is present (without reading it).
func (f *Fields) Has(key string) bool {
	_, ok := f.values[key]
	return ok
}

func (f *Fields) get(key string, required bool) (json.RawMessage, bool) {
	f.used[key] = true
	v, ok := f.values[key]
	if !ok && required {
		f.Problem(key, "is required")
	}
	return v, ok
}

// Str reads a string.
func (f *Fields) Str(key string, required bool) string {
	raw, ok := f.get(key, required)
	if !ok {
		return ""
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.Problem(key, "must be a string")
	}
	return s
}

// Bool reads a boolean.
func (f *Fields) Bool(key string, required bool) bool {
	raw, ok := f.get(key, required)
	if !ok {
		return false
	}
	var b bool
	if err := json.Unmarshal(raw, &b); err != nil {
		f.Problem(key, "must be true or false")
	}
	return b
}

// Strings reads an array of strings.
func (f *Fields) Strings(key string, required bool) []string {
	raw, ok := f.get(key, required)
	if !ok {
		return nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		f.Problem(key, "must be an array of strings")
		return nil
	}
	return out
}

// StringMap reads an object of strings and returns it with its keys sorted.
func (f *Fields) StringMap(key string) (map[string]string, []string) {
	raw, ok := f.get(key, false)
	if !ok {
		return nil, nil
	}
	var out map[string]string
	if err := json.Unmarshal(raw, &out); err != nil || out == nil {
		f.Problem(key, "must be an object of strings")
		return nil, nil
	}
	keys := make([]string, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return out, keys
}

// Integer reads an integer.
func (f *Fields) Integer(key string, required bool) int {
	raw, ok := f.get(key, required)
	if !ok {
		return 0
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		f.Problem(key, "must be an integer")
	}
	return n
}

// IntegerIn reads an optional integer in lo..hi, def when absent.
func (f *Fields) IntegerIn(key string, def, lo, hi int64) int64 {
	raw, ok := f.get(key, false)
	if !ok {
		return def
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil || n < lo || n > hi {
		f.Problem(key, fmt.Sprintf("must be an integer in %d..%d", lo, hi))
		return def
	}
	return n
}

// Duration reads an optional Go duration string ("5s", "250ms") in lo..hi,
// def when absent.
func (f *Fields) Duration(key string, def, lo, hi time.Duration) time.Duration {
	raw, ok := f.get(key, false)
	if !ok {
		return def
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		f.Problem(key, "must be a duration string such as \"5s\"")
		return def
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < lo || d > hi {
		f.Problem(key, fmt.Sprintf("must be a duration in %s..%s", lo, hi))
		return def
	}
	return d
}

// Raw returns the member as it is.
func (f *Fields) Raw(key string, required bool) json.RawMessage {
	raw, _ := f.get(key, required)
	return raw
}

// Object returns the member, which must be a JSON object.
func (f *Fields) Object(key string, required bool) json.RawMessage {
	raw, ok := f.get(key, required)
	if ok && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		f.Problem(key, "must be a JSON object")
		return nil
	}
	return raw
}

// Sub starts reading the object at key.
func (f *Fields) Sub(key string, required bool) *Fields {
	raw, ok := f.get(key, required)
	if !ok {
		return nil
	}
	return ReadFields(f.At(key), f.code, raw, f.problems)
}

// Array returns the members of the array at key.
func (f *Fields) Array(key string, required bool) []json.RawMessage {
	raw, ok := f.get(key, required)
	if !ok {
		return nil
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		f.Problem(key, "must be an array")
	}
	return out
}

// Done refuses every field nobody read, in a stable order.
func (f *Fields) Done() {
	var extra []string
	for k := range f.values {
		if !f.used[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		f.Problem(k, "unknown field")
	}
}
