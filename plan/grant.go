package plan

import (
	"encoding/json"

	"github.com/apysup/apysup/internal/canonjson"
)

// MaxGrantBytes bounds a grant policy.
const MaxGrantBytes = 64 << 10

// Grant is a host policy for one capability. Its raw policy never leaves
// the host: only Identity() is exposed, and it is what the Plan binds.
type Grant struct {
	identity string
}

// NewGrant canonicalises policy (a JSON object of at most 64 KiB). The
// error never quotes the policy.
func NewGrant(policy json.RawMessage) (*Grant, error) {
	if len(policy) > MaxGrantBytes {
		return nil, errorf(CodeGrantTooLarge, "grant policy larger than %d bytes", MaxGrantBytes)
	}
	canon, err := canonjson.Canonical(policy)
	if err != nil {
		return nil, errorf(CodeInvalidGrant, "grant policy is not valid JSON (%s)", canonjson.CodeOf(err))
	}
	if canon[0] != '{' {
		return nil, errorf(CodeInvalidGrant, "grant policy must be a JSON object")
	}
	return &Grant{identity: canonjson.Digest(canonjson.DomainGrant, canon)}, nil
}

// Identity is the domain-separated digest of the canonical policy.
func (g *Grant) Identity() string { return g.identity }

// String never shows the policy.
func (g *Grant) String() string { return "Grant(" + g.identity + ")" }
