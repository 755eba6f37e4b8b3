package plan

import (
	"errors"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/apysup/apysup/internal/canonjson"
)

// MaxPointerBytes bounds the argument path a refusal names.
const MaxPointerBytes = 256

// Policy is a sealed grant bound to its capability: what the Broker
// enforces at admission, after the input schema and before approval. It
// never shows the policy: a refusal names only the path of the argument it
// refused, and only with names the host wrote.
type Policy struct {
	grant *Grant
	// names are the property names the host declared in the capability's
	// input schema or the grant's arguments schema: the only object keys
	// a refusal may name (any other key is the guest's own text).
	names map[string]bool
}

func newPolicy(c *Capability, g *Grant) *Policy {
	p := &Policy{grant: g, names: map[string]bool{}}
	if doc, err := canonjson.ParseStrict(c.spec.InputSchema, MaxSchemaBytes); err == nil {
		declaredNames(doc, p.names)
	}
	declaredNames(g.argsDoc, p.names)
	return p
}

// Grant is the grant this policy enforces.
func (p *Policy) Grant() *Grant { return p.grant }

// MaxCalls is how many calls of the capability one run may make under the
// grant; 0 when only the Plan's max_calls bounds them.
func (p *Policy) MaxCalls() int { return p.grant.maxCalls }

// CheckArguments checks a call's canonical arguments (decoded as for
// ValidateInput) against the grant's arguments schema. When it refuses,
// pointer is the JSON Pointer (RFC 6901) of the refused argument: the
// deepest place the schema refused, cut back to the part made of names the
// host declared and array indices ("" is the arguments as a whole). It is
// the same for the same arguments, whatever order the validator took.
func (p *Policy) CheckArguments(args any) (pointer string, ok bool) {
	if p.grant.arguments == nil {
		return "", true
	}
	err := p.grant.arguments.Validate(args)
	if err == nil {
		return "", true
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return "", false
	}
	depth := -1
	for _, loc := range leafLocations(ve, nil) {
		segs := p.vouched(args, loc)
		text := Pointer(segs)
		if len(segs) > depth || (len(segs) == depth && text < pointer) {
			depth, pointer = len(segs), text
		}
	}
	return pointer, false
}

// leafLocations lists the instance location of every leaf cause; a missing
// required property is located at the property itself.
func leafLocations(e *jsonschema.ValidationError, out [][]string) [][]string {
	if len(e.Causes) > 0 {
		for _, c := range e.Causes {
			out = leafLocations(c, out)
		}
		return out
	}
	loc := e.InstanceLocation
	var missing []string
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		missing = k.Missing
	case *kind.DependentRequired:
		missing = k.Missing
	}
	if len(missing) > 0 {
		sorted := append([]string(nil), missing...)
		sort.Strings(sorted)
		loc = append(append([]string(nil), loc...), sorted[0])
	}
	return append(out, loc)
}

// vouched is the longest prefix of loc whose object keys the host declared
// and whose array indices the arguments hold, bounded by MaxPointerBytes.
func (p *Policy) vouched(args any, loc []string) []string {
	n, size := 0, 0
	v := args
	for _, seg := range loc {
		switch cur := v.(type) {
		case map[string]any:
			if !p.names[seg] {
				return loc[:n]
			}
			v = cur[seg]
		case []any:
			i, ok := parseIndex(seg)
			if !ok || i >= len(cur) {
				v = nil // a missing required item: the index is still the host's to say
			} else {
				v = cur[i]
			}
		default:
			if !p.names[seg] { // a required property of a missing object
				return loc[:n]
			}
			v = nil
		}
		if size += 1 + len(seg); size > MaxPointerBytes {
			return loc[:n]
		}
		n++
	}
	return loc[:n]
}

func parseIndex(s string) (int, bool) {
	if s == "" || len(s) > 9 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// Pointer is the JSON Pointer (RFC 6901) of path segments.
func Pointer(segs []string) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(s))
	}
	return b.String()
}

// declaredNames adds to names every property name a schema declares:
// the keys of properties, dependentSchemas and dependentRequired, and the
// entries of required and dependentRequired, at any depth. Values
// (enum, const, default, examples) are not schemas and are skipped.
func declaredNames(schema any, names map[string]bool) {
	switch s := schema.(type) {
	case []any:
		for _, sub := range s {
			declaredNames(sub, names)
		}
	case map[string]any:
		for k, v := range s {
			switch k {
			case "enum", "const", "default", "examples":
			case "required":
				addStrings(v, names)
			case "properties", "dependentSchemas", "dependentRequired":
				m, _ := v.(map[string]any)
				for name, sub := range m {
					names[name] = true
					if k == "dependentRequired" {
						addStrings(sub, names)
					} else {
						declaredNames(sub, names)
					}
				}
			case "patternProperties", "$defs", "definitions":
				m, _ := v.(map[string]any)
				for _, sub := range m {
					declaredNames(sub, names)
				}
			default:
				declaredNames(v, names)
			}
		}
	}
}

func addStrings(v any, names map[string]bool) {
	list, _ := v.([]any)
	for _, s := range list {
		if name, ok := s.(string); ok {
			names[name] = true
		}
	}
}
