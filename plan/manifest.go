package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

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

// Grant reads the policy bound to a capability, for host-side handler
// construction only. path is the policy's manifest path
// ("grants[j].policy"); its problems come back as Problems under that path.
// A capability no grant names has neither grant nor error.
func (m *Manifest) Grant(capability string) (g *Grant, path string, err error) {
	for j, mg := range m.Grants {
		if mg.Capability == capability {
			path = fmt.Sprintf("grants[%d].policy", j)
			if g, err = NewGrant(mg.Policy); err != nil {
				return nil, path, appendProblems(nil, path, err)
			}
			return g, path, nil
		}
	}
	return nil, "", nil
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
	// The structure first (manifestSchemaJSON); then the values are read.
	if problems := schemaProblems(data); len(problems) > 0 {
		return nil, problems
	}
	var problems Problems
	root := ReadFields("", CodeInvalidManifest, data, &problems)
	if root == nil {
		return nil, problems
	}
	m := &Manifest{}
	if v := root.Str("schema_version", true); v != "" && v != ManifestSchemaVersion {
		root.Problem("schema_version", fmt.Sprintf("schema_version must be %q", ManifestSchemaVersion))
	}
	m.MaxCalls = root.Integer("max_calls", true)
	for i, raw := range root.Array("capabilities", true) {
		f := ReadFields(fmt.Sprintf("capabilities[%d]", i), CodeInvalidManifest, raw, &problems)
		if f == nil {
			continue
		}
		m.Capabilities = append(m.Capabilities, parseCapability(f))
		f.Done()
	}
	for i, raw := range root.Array("grants", true) {
		f := ReadFields(fmt.Sprintf("grants[%d]", i), CodeInvalidManifest, raw, &problems)
		if f == nil {
			continue
		}
		g := ManifestGrant{Capability: f.Str("capability", true), Policy: f.Object("policy", true)}
		f.Done()
		m.Grants = append(m.Grants, g)
	}
	root.Done()
	if len(problems) > 0 {
		return nil, problems
	}
	return m, nil
}

func parseCapability(f *Fields) ManifestCapability {
	mc := ManifestCapability{}
	s := &mc.Spec
	s.Name = f.Str("name", true)
	s.Version = f.Str("version", true)
	s.Description = f.Str("description", false)
	s.Effect = Effect(f.Str("effect", true))
	s.Playback = Playback(f.Str("playback", true))
	if h := f.Sub("handler", true); h != nil {
		s.Handler.Kind = h.Str("kind", true)
		s.Handler.ID = h.Str("id", true)
		s.Handler.Version = h.Str("version", true)
		mc.HandlerConfig = h.Object("config", false)
		if len(mc.HandlerConfig) == 0 {
			mc.HandlerConfig = json.RawMessage(`{}`)
		}
		if canon, err := canonjson.Canonical(mc.HandlerConfig); err == nil {
			s.Handler.ConfigSHA256 = canonjson.PlainDigest(canon)
		}
		h.Done()
	}
	s.InputSchema = f.Raw("input_schema", false)
	s.OutputSchema = f.Raw("output_schema", false)
	if p := f.Sub("python", false); p != nil {
		named := !p.Has("globals") // a projection of globals alone has no module
		s.Python = &PythonProjection{Module: p.Str("module", named), Function: p.Str("function", named),
			Aliases: p.Strings("aliases", false), Globals: p.Strings("globals", false)}
		p.Done()
	}
	if a := f.Sub("approval", false); a != nil {
		s.Approval = &Approval{LeaseSeconds: a.Integer("lease_seconds", true)}
		a.Done()
	}
	s.Acceptance = Acceptance(f.Str("acceptance", false))
	return mc
}

// HandlerChecker checks what only the host's handlers know about a
// manifest: which handler kinds and ids exist, each handler's config, and
// the fit of each config with its capability's grant. It returns nil or
// Problems whose paths point into the manifest. broker/handlers.Checker is
// the checker of the handlers apysup builds; a host with its own handlers
// supplies its own, since plan cannot know them (plan is below broker).
type HandlerChecker interface {
	CheckHandlers(m *Manifest) error
}

// Validate is the one validation of a manifest (libcontainer's
// configs/validate): registration of every capability and grant as Seal
// does it, then the handlers through hc. Seal calls it, and so does
// everything that runs a manifest, so that what seals is what runs. Every
// problem is reported at once, each once, as Problems. A nil hc is refused:
// a manifest is not valid until its handlers are known to exist.
func (m *Manifest) Validate(hc HandlerChecker) error {
	if _, problems := m.validate(hc); len(problems) > 0 {
		return problems
	}
	return nil
}

// Seal validates the manifest (Validate) and seals its Plan.
func (m *Manifest) Seal(hc HandlerChecker) (*Plan, error) {
	r, problems := m.validate(hc)
	if len(problems) > 0 {
		return nil, problems
	}
	p, err := r.Seal()
	if err != nil {
		return nil, appendProblems(nil, "", err)
	}
	return p, nil
}

func (m *Manifest) validate(hc HandlerChecker) (*Registry, Problems) {
	r, problems := m.register()
	if hc == nil {
		problems = append(problems, errorf(CodeInvalidHandler, "no handler checker: the manifest's handlers cannot be checked"))
	} else {
		problems = appendProblems(problems, "", hc.CheckHandlers(m))
	}
	return r, problems.unique()
}

// register registers every capability and grant in a fresh registry,
// collecting every problem with its manifest path.
func (m *Manifest) register() (*Registry, Problems) {
	var problems Problems
	r, err := NewRegistry(m.MaxCalls)
	if err != nil {
		// Report it with every other problem: the rest is checked in a
		// registry that is never sealed.
		problems = appendProblems(problems, "", err)
		r, _ = NewRegistry(MaxCallsLimit)
	}
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
	return r, problems
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
