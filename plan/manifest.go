package plan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"

	"github.com/apysup/apysup/internal/canonjson"
)

// ManifestSchemaVersion is the schema_version a manifest must declare.
const ManifestSchemaVersion = "apysup.manifest.v1"

// Manifest is the JSON document a CLI user writes. It holds host-private
// material (handler configs, grant policies) that never enters the Plan
// except by digest.
type Manifest struct {
	MaxCalls     int
	Capabilities []ManifestCapability
	Grants       []ManifestGrant
}

// ManifestCapability is one capability entry: its Spec and the handler's
// kind-specific configuration (bound into the handler identity by digest).
type ManifestCapability struct {
	Spec          Spec
	HandlerConfig json.RawMessage
}

// ManifestGrant binds a policy to a capability. Policy is host-private.
type ManifestGrant struct {
	Capability string
	Policy     json.RawMessage
}

// Policy returns the grant policy for a capability, for host-side handler
// construction only.
func (m *Manifest) Policy(capability string) (json.RawMessage, bool) {
	for _, g := range m.Grants {
		if g.Capability == capability {
			return g.Policy, true
		}
	}
	return nil, false
}

// LoadManifest reads and parses a manifest file.
func LoadManifest(path string) (*Manifest, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read manifest: %w", err)
	}
	return ParseManifest(data)
}

// ParseManifest parses a manifest strictly and reports every problem at
// once, each with its JSON path. The result is Problems when invalid.
func ParseManifest(data []byte) (*Manifest, error) {
	if err := canonjson.Validate(data, canonjson.MaxHostBytes); err != nil {
		return nil, Problems{{Code: CodeInvalidManifest, Message: "not strict JSON: " + err.Error()}}
	}
	var problems Problems
	root := newFields("", data, &problems)
	if root == nil {
		return nil, problems
	}
	m := &Manifest{}
	if v := root.str("schema_version", true); v != "" && v != ManifestSchemaVersion {
		root.problem("schema_version", CodeInvalidManifest, "schema_version must be %q", ManifestSchemaVersion)
	}
	m.MaxCalls = root.integer("max_calls", true)
	for i, raw := range root.array("capabilities", true) {
		f := newFields(fmt.Sprintf("capabilities[%d]", i), raw, &problems)
		if f == nil {
			continue
		}
		m.Capabilities = append(m.Capabilities, parseCapability(f))
		f.unknown()
	}
	for i, raw := range root.array("grants", true) {
		f := newFields(fmt.Sprintf("grants[%d]", i), raw, &problems)
		if f == nil {
			continue
		}
		g := ManifestGrant{Capability: f.str("capability", true), Policy: f.object("policy", true)}
		f.unknown()
		m.Grants = append(m.Grants, g)
	}
	root.unknown()
	if len(problems) > 0 {
		return nil, problems
	}
	return m, nil
}

func parseCapability(f *fields) ManifestCapability {
	mc := ManifestCapability{}
	s := &mc.Spec
	s.Name = f.str("name", true)
	s.Version = f.str("version", true)
	s.Description = f.str("description", false)
	s.Effect = Effect(f.str("effect", true))
	s.Playback = Playback(f.str("playback", true))
	if h := f.sub("handler", true); h != nil {
		s.Handler.Kind = h.str("kind", true)
		s.Handler.ID = h.str("id", true)
		s.Handler.Version = h.str("version", true)
		mc.HandlerConfig = h.object("config", false)
		if len(mc.HandlerConfig) == 0 {
			mc.HandlerConfig = json.RawMessage(`{}`)
		}
		if canon, err := canonjson.Canonical(mc.HandlerConfig); err == nil {
			s.Handler.ConfigSHA256 = canonjson.PlainDigest(canon)
		}
		h.unknown()
	}
	s.InputSchema = f.raw("input_schema", false)
	s.OutputSchema = f.raw("output_schema", false)
	if p := f.sub("python", false); p != nil {
		s.Python = &PythonProjection{Module: p.str("module", true), Function: p.str("function", true), Aliases: p.strings("aliases")}
		p.unknown()
	}
	if a := f.sub("approval", false); a != nil {
		s.Approval = &Approval{LeaseSeconds: a.integer("lease_seconds", true)}
		a.unknown()
	}
	return mc
}

// Seal registers every capability and grant and seals the Plan, reporting
// every registration problem with its manifest path.
func (m *Manifest) Seal() (*Plan, error) {
	r, err := NewRegistry(m.MaxCalls)
	if err != nil {
		return nil, Problems{at("", err)}
	}
	var problems Problems
	failed := map[string]bool{} // capabilities that did not register
	for i, c := range m.Capabilities {
		if err := r.Register(c.Spec); err != nil {
			failed[c.Spec.Name] = true
			problems = appendProblems(problems, fmt.Sprintf("capabilities[%d]", i), err)
		}
	}
	for i, g := range m.Grants {
		if failed[g.Capability] {
			continue // its capability's problem is already reported
		}
		grant, err := NewGrant(g.Policy)
		if err != nil {
			problems = appendProblems(problems, fmt.Sprintf("grants[%d].policy", i), err)
			continue
		}
		problems = appendProblems(problems, fmt.Sprintf("grants[%d]", i), r.Bind(g.Capability, grant))
	}
	if len(problems) > 0 {
		return nil, problems
	}
	p, err := r.Seal()
	if err != nil {
		return nil, appendProblems(nil, "", err)
	}
	return p, nil
}

func appendProblems(list Problems, path string, err error) Problems {
	if err == nil {
		return list
	}
	var many Problems
	if errors.As(err, &many) {
		for _, e := range many {
			list = append(list, at(path, e))
		}
		return list
	}
	return append(list, at(path, err))
}

// fields reads one JSON object of a manifest, recording problems with paths.
type fields struct {
	path     string
	values   map[string]json.RawMessage
	used     map[string]bool
	problems *Problems
}

func newFields(path string, raw json.RawMessage, problems *Problems) *fields {
	f := &fields{path: path, used: map[string]bool{}, problems: problems}
	if err := json.Unmarshal(raw, &f.values); err != nil || f.values == nil {
		f.problem("", CodeInvalidManifest, "must be a JSON object")
		return nil
	}
	return f
}

func (f *fields) join(key string) string {
	switch {
	case key == "":
		return f.path
	case f.path == "":
		return key
	}
	return f.path + "." + key
}

func (f *fields) problem(key, code, format string, args ...any) {
	*f.problems = append(*f.problems, &Error{Code: code, Path: f.join(key), Message: fmt.Sprintf(format, args...)})
}

func (f *fields) get(key string, required bool) (json.RawMessage, bool) {
	f.used[key] = true
	v, ok := f.values[key]
	if !ok && required {
		f.problem(key, CodeInvalidManifest, "is required")
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
		f.problem(key, CodeInvalidManifest, "must be a string")
	}
	return s
}

func (f *fields) integer(key string, required bool) int {
	raw, ok := f.get(key, required)
	if !ok {
		return 0
	}
	var n int
	if err := json.Unmarshal(raw, &n); err != nil {
		f.problem(key, CodeInvalidManifest, "must be an integer")
	}
	return n
}

func (f *fields) raw(key string, required bool) json.RawMessage {
	raw, _ := f.get(key, required)
	return raw
}

func (f *fields) object(key string, required bool) json.RawMessage {
	raw, ok := f.get(key, required)
	if ok && !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("{")) {
		f.problem(key, CodeInvalidManifest, "must be a JSON object")
		return nil
	}
	return raw
}

func (f *fields) sub(key string, required bool) *fields {
	raw, ok := f.get(key, required)
	if !ok {
		return nil
	}
	return newFields(f.join(key), raw, f.problems)
}

func (f *fields) array(key string, required bool) []json.RawMessage {
	raw, ok := f.get(key, required)
	if !ok {
		return nil
	}
	var out []json.RawMessage
	if err := json.Unmarshal(raw, &out); err != nil {
		f.problem(key, CodeInvalidManifest, "must be an array")
	}
	return out
}

func (f *fields) strings(key string) []string {
	raw, ok := f.get(key, false)
	if !ok {
		return nil
	}
	var out []string
	if err := json.Unmarshal(raw, &out); err != nil {
		f.problem(key, CodeInvalidManifest, "must be an array of strings")
	}
	return out
}

// unknown reports every field nobody read, in a stable order.
func (f *fields) unknown() {
	var extra []string
	for k := range f.values {
		if !f.used[k] {
			extra = append(extra, k)
		}
	}
	sort.Strings(extra)
	for _, k := range extra {
		f.problem(k, CodeInvalidManifest, "unknown field")
	}
}
