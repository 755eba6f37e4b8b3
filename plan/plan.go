package plan

import (
	"encoding/json"
	"fmt"

	"github.com/apysup/apysup/internal/canonjson"
)

// SchemaVersion of the Plan evidence document.
const SchemaVersion = "apysup.plan.v1"

// GrantBinding is what a Plan knows of a grant: its digest, never its policy.
type GrantBinding struct {
	Capability   string `json:"capability"`
	PolicySHA256 string `json:"policy_sha256"`
}

// Plan is a sealed, immutable set of capabilities and grant bindings.
type Plan struct {
	maxCalls int
	ordered  []*Capability // sorted by name
	byName   map[string]*Capability
	grants   []GrantBinding // sorted by capability
	policies map[string]*Policy
	evidence []byte // canonical evidence document
	identity string
}

// evidenceSpec is the identity-bearing form of a Spec: presentation
// (the Python projection) is left out on purpose.
type evidenceSpec struct {
	Name         string          `json:"name"`
	Version      string          `json:"version"`
	Description  string          `json:"description"`
	Effect       Effect          `json:"effect"`
	Playback     Playback        `json:"playback"`
	Handler      HandlerIdentity `json:"handler"`
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema"`
	Approval     *Approval       `json:"approval,omitempty"`
	Acceptance   Acceptance      `json:"acceptance,omitempty"`
}

type evidenceDocument struct {
	SchemaVersion string         `json:"schema_version"`
	MaxCalls      int            `json:"max_calls"`
	Capabilities  []evidenceSpec `json:"capabilities"`
	Grants        []GrantBinding `json:"grants"`
}

func (p *Plan) computeIdentity() error {
	doc := evidenceDocument{SchemaVersion: SchemaVersion, MaxCalls: p.maxCalls, Capabilities: []evidenceSpec{}, Grants: p.grants}
	if doc.Grants == nil {
		doc.Grants = []GrantBinding{}
	}
	for _, c := range p.ordered {
		s := c.spec
		doc.Capabilities = append(doc.Capabilities, evidenceSpec{
			Name: s.Name, Version: s.Version, Description: s.Description, Effect: s.Effect, Playback: s.Playback,
			Handler: s.Handler, InputSchema: s.InputSchema, OutputSchema: s.OutputSchema, Approval: s.Approval,
			Acceptance: s.Acceptance,
		})
	}
	canon, err := canonjson.Marshal(doc)
	if err != nil {
		return fmt.Errorf("plan: evidence document: %w", err)
	}
	p.evidence = canon
	p.identity = canonjson.Digest(canonjson.DomainPlan, canon)
	return nil
}

// Identity is "sha256:<hex>" of the evidence document in the plan domain.
func (p *Plan) Identity() string { return p.identity }

// MaxCalls is the number of calls a run bound to this Plan may make.
func (p *Plan) MaxCalls() int { return p.maxCalls }

// Lookup returns the capability registered under name.
func (p *Plan) Lookup(name string) (*Capability, bool) {
	c, ok := p.byName[name]
	return c, ok
}

// Policy returns the grant policy bound to a capability, for the host's
// Broker and handlers; it is never part of any output.
func (p *Plan) Policy(name string) (*Policy, bool) {
	pol, ok := p.policies[name]
	return pol, ok
}

// Capabilities returns the capabilities sorted by name.
func (p *Plan) Capabilities() []*Capability { return append([]*Capability(nil), p.ordered...) }

// Grants returns the grant bindings sorted by capability.
func (p *Plan) Grants() []GrantBinding { return append([]GrantBinding(nil), p.grants...) }

// EvidenceDocument returns exactly the canonical document whose digest is
// Identity(), so anyone can recompute the identity.
func (p *Plan) EvidenceDocument() []byte { return append([]byte(nil), p.evidence...) }
