package plan

import (
	"fmt"
	"sort"
	"sync"
)

// Bounds on a Plan.
const (
	MaxCallsLimit   = 256 // receipts per run are bounded by the same number
	MaxCapabilities = 256
)

// Registry collects Specs and Grants and seals them, once, into a Plan.
// It is safe for concurrent use.
type Registry struct {
	mu           sync.Mutex
	maxCalls     int
	capabilities map[string]*Capability
	grants       map[string]*Grant
	python       map[string]string // pythonName.name -> capability name
	sealed       bool
}

// NewRegistry starts a registry for a Plan allowing maxCalls calls per run
// (1..256).
func NewRegistry(maxCalls int) (*Registry, error) {
	if maxCalls < 1 || maxCalls > MaxCallsLimit {
		return nil, &Error{Code: CodeInvalidMaxCalls, Path: "max_calls", Message: "max_calls must be 1..256"}
	}
	return &Registry{
		maxCalls:     maxCalls,
		capabilities: make(map[string]*Capability),
		grants:       make(map[string]*Grant),
		python:       make(map[string]string),
	}, nil
}

// Register validates and adds a capability. It refuses after Seal, a
// duplicate name, and a Python function or alias that another capability
// already presents.
func (r *Registry) Register(s Spec) error {
	c, err := newCapability(s)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return errorf(CodeRegistrySealed, "the registry is sealed; nothing registers after sealing")
	}
	if _, dup := r.capabilities[c.spec.Name]; dup {
		return &Error{Code: CodeDuplicateCapability, Path: "name", Message: "capability " + c.spec.Name + " is already registered"}
	}
	if len(r.capabilities) >= MaxCapabilities {
		return errorf(CodeInvalidManifest, "at most %d capabilities", MaxCapabilities)
	}
	names := pythonNames(c.spec.Python)
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if other, taken := r.python[n.name]; taken || seen[n.name] {
			if !taken {
				other = c.spec.Name
			}
			return &Error{Code: CodePythonCollision, Path: n.path, Message: "python name " + n.name + " is already presented by " + other}
		}
		seen[n.name] = true
	}
	for _, n := range names {
		r.python[n.name] = c.spec.Name
	}
	r.capabilities[c.spec.Name] = c
	return nil
}

// pythonName is a name a projection occupies in the guest: "module.function"
// for a module's function or alias, the bare name for a global (so the two
// never collide), with the manifest path that claims it.
type pythonName struct{ name, path string }

func pythonNames(p *PythonProjection) []pythonName {
	if p == nil {
		return nil
	}
	var out []pythonName
	if p.Module != "" {
		out = append(out, pythonName{p.Module + "." + p.Function, "python"})
		for i, a := range p.Aliases {
			out = append(out, pythonName{p.Module + "." + a, fmt.Sprintf("python.aliases[%d]", i)})
		}
	}
	for i, g := range p.Globals {
		out = append(out, pythonName{g, fmt.Sprintf("python.globals[%d]", i)})
	}
	return out
}

// Bind attaches a grant to a registered capability. Every capability needs
// exactly one grant before sealing, and the grant's handler section (if
// any) must be for the capability's handler kind (Grant.FitsHandler).
func (r *Registry) Bind(capability string, g *Grant) error {
	if g == nil {
		return errorf(CodeInvalidGrant, "nil grant")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return errorf(CodeRegistrySealed, "the registry is sealed; nothing registers after sealing")
	}
	c, ok := r.capabilities[capability]
	if !ok {
		return &Error{Code: CodeGrantUnknown, Path: "capability", Message: "no registered capability " + quoteName(capability)}
	}
	if _, dup := r.grants[capability]; dup {
		return &Error{Code: CodeDuplicateGrant, Path: "capability", Message: "capability " + capability + " already has a grant"}
	}
	if err := g.FitsHandler(c.spec.Handler.Kind); err != nil {
		return at("policy", err)
	}
	r.grants[capability] = g
	return nil
}

// Seal closes the registry, exactly once, and returns the immutable Plan.
func (r *Registry) Seal() (*Plan, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		return nil, errorf(CodeRegistrySealed, "the registry is already sealed")
	}
	var ungranted Problems
	names := make([]string, 0, len(r.capabilities))
	for name := range r.capabilities {
		names = append(names, name)
		if r.grants[name] == nil {
			ungranted = append(ungranted, errorf(CodeCapabilityUngranted, "capability %s has no grant", name))
		}
	}
	if len(ungranted) > 0 {
		sort.Slice(ungranted, func(i, j int) bool { return ungranted[i].Message < ungranted[j].Message })
		return nil, ungranted
	}
	sort.Strings(names)
	p := &Plan{maxCalls: r.maxCalls, byName: make(map[string]*Capability, len(names)), policies: make(map[string]*Policy, len(names))}
	for _, name := range names {
		c, g := r.capabilities[name], r.grants[name]
		p.ordered = append(p.ordered, c)
		p.byName[name] = c
		p.policies[name] = newPolicy(c, g)
		p.grants = append(p.grants, GrantBinding{Capability: name, PolicySHA256: g.Identity()})
	}
	if err := p.computeIdentity(); err != nil {
		return nil, err
	}
	r.sealed = true
	return p, nil
}

// quoteName bounds a name echoed in an error.
func quoteName(s string) string {
	if len(s) > MaxNameLen {
		s = s[:MaxNameLen] + "..."
	}
	return "\"" + s + "\""
}
