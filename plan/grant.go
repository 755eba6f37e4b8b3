package plan

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
)

// Bounds of a grant policy.
const (
	MaxGrantBytes     = 64 << 10
	MaxAllowedHosts   = 64
	MaxPathPrefixes   = 64
	MaxPathPrefixLen  = 1024
	MaxKeyPrefixBytes = 256 // a kv key's own bound
	MaxCommands       = 64
	MaxExecTimeout    = time.Hour
)

// Handler kinds a grant may have a section for (SectionKinds). A section
// for another kind than the capability's handler is refused when binding.
const (
	SectionHTTP = "http"
	SectionKV   = "kv"
	SectionExec = "exec"
)

// HTTPMethods are the methods an http grant may list.
var HTTPMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// KVNamespacePattern is what a kv namespace looks like, in a grant and in
// a kv handler's config.
var KVNamespacePattern = pattern.New("a-z", "a-z0-9_.-", 64)

// pathPrefixRE admits an absolute path of unreserved characters, sub-delims,
// ':' and '@' (RFC 3986 pchar without percent-encoding): a prefix is
// compared with the URL template as written, so there is one spelling.
var pathPrefixRE = regexp.MustCompile(`^/[A-Za-z0-9._~!$&'()*+,;=:@/-]*$`)

// Grant is a host policy for one capability. Its raw policy never leaves
// the host: only Identity() is exposed outside it, and it is what the Plan
// binds. The policy language (docs/manifest.md, "Grant policy"):
//
//	{"arguments": <JSON Schema>, "max_calls": N, "http"|"kv"|"exec": {...}}
//
// Every member is optional; an unknown member is refused, so nothing in a
// grant is ever silently ignored.
type Grant struct {
	identity  string
	arguments *jsonschema.Schema // nil: the grant adds nothing to the input schema
	argsDoc   any                // the decoded arguments schema, for the names it declares
	maxCalls  int                // 0: only the Plan's max_calls bounds the capability
	section   string             // the kind of the handler section, "" when none
	canonSect []byte             // the section's canonical JSON, nil when none
	http      *HTTPGrant
	kv        *KVGrant
	exec      *ExecGrant
}

// HTTPGrant is a grant's http section: where an http capability may send
// its request. The handler's config must stay inside it.
type HTTPGrant struct {
	AllowedHosts []string // normalised host:port (NormalHostPort), at least one
	Methods      []string // nil: every method an http handler supports
	PathPrefixes []string // nil: every path
}

// KVGrant is a grant's kv section.
type KVGrant struct {
	Namespace string // "": any namespace the config names
	KeyPrefix string // "": any key
	ReadOnly  bool   // the handler may not change the store (op put is refused)
}

// ExecGrant is a grant's exec section.
type ExecGrant struct {
	Commands   []string      // nil: any command; else argv[0] must be one of these paths
	MaxTimeout time.Duration // 0: the config's timeout, whatever it is (at most 1h)
}

// NewGrant reads a policy (a JSON object of at most 64 KiB) strictly,
// compiles its arguments schema and canonicalises it. Every problem is
// reported with its path inside the policy ("http.allowed_hosts[1]"); no
// error quotes a value of the policy.
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
	var problems Problems
	f := ReadFields("", CodeInvalidGrant, canon, &problems)
	if f == nil {
		return nil, problems
	}
	g := &Grant{identity: canonjson.Digest(canonjson.DomainGrant, canon)}
	g.readArguments(f)
	if f.Has("max_calls") {
		g.maxCalls = int(f.IntegerIn("max_calls", 0, 1, MaxCallsLimit))
	}
	for _, kind := range []string{SectionHTTP, SectionKV, SectionExec} {
		s := f.Sub(kind, false)
		if s == nil {
			continue
		}
		switch kind {
		case SectionHTTP:
			g.http = readHTTPGrant(s)
		case SectionKV:
			g.kv = readKVGrant(s)
		case SectionExec:
			g.exec = readExecGrant(s)
		}
		s.Done()
		if g.section != "" {
			f.Problem(kind, "a grant has at most one handler section (it also has "+g.section+")")
			continue
		}
		g.section = kind
		g.canonSect, _ = canonjson.Canonical(f.values[kind])
	}
	f.Done()
	if len(problems) > 0 {
		return nil, problems
	}
	return g, nil
}

// readArguments compiles the arguments schema. Its problems name where in
// the schema it fails, never what it holds.
func (g *Grant) readArguments(f *Fields) {
	raw := f.Raw("arguments", false)
	if raw == nil {
		return
	}
	doc, sch, err := compileSchemaDoc(raw, true)
	if err != nil {
		f.Problem("arguments"+schemaErrorPath(err), "is not valid here: arguments must be a JSON Schema (draft 2020-12) without external references")
		return
	}
	if at, msg := unenforcedKeyword(doc, ""); msg != "" {
		f.Problem("arguments"+at, msg)
		return
	}
	g.arguments, g.argsDoc = sch, doc
}

// Keywords of a grant's arguments schema. JSON Schema ignores what it
// does not know, and treats format and some other keywords as
// annotations; a grant may hold only keywords that are enforced (or plain
// documentation), so that no rule in it is silently ignored.
var (
	grantKeywords = map[string]bool{
		"$ref": true, "$defs": true, "$anchor": true, "$comment": true, "$schema": true, "title": true, "description": true,
		"type": true, "const": true, "enum": true, "multipleOf": true, "maximum": true, "exclusiveMaximum": true,
		"minimum": true, "exclusiveMinimum": true, "maxLength": true, "minLength": true, "pattern": true, "format": true,
		"maxItems": true, "minItems": true, "uniqueItems": true, "maxContains": true, "minContains": true,
		"maxProperties": true, "minProperties": true, "required": true, "dependentRequired": true,
		"properties": true, "patternProperties": true, "additionalProperties": true, "propertyNames": true,
		"dependentSchemas": true, "unevaluatedProperties": true, "prefixItems": true, "items": true, "contains": true,
		"unevaluatedItems": true, "allOf": true, "anyOf": true, "oneOf": true, "not": true, "if": true, "then": true, "else": true,
	}
	schemaMapKeywords   = map[string]bool{"$defs": true, "properties": true, "patternProperties": true, "dependentSchemas": true}
	schemaListKeywords  = map[string]bool{"prefixItems": true, "allOf": true, "anyOf": true, "oneOf": true}
	schemaValueKeywords = map[string]bool{"additionalProperties": true, "propertyNames": true, "unevaluatedProperties": true,
		"items": true, "contains": true, "unevaluatedItems": true, "not": true, "if": true, "then": true, "else": true}
	// grantFormats are the formats the validator checks (AssertFormat).
	grantFormats = map[string]bool{
		"date-time": true, "date": true, "time": true, "duration": true, "email": true, "hostname": true, "ipv4": true,
		"ipv6": true, "uri": true, "uri-reference": true, "iri": true, "iri-reference": true, "uuid": true,
		"uri-template": true, "json-pointer": true, "relative-json-pointer": true, "regex": true,
	}
)

// unenforcedKeyword finds, in a deterministic order, the first keyword of
// a compiled schema that the validator would not enforce, and returns its
// Fields path suffix and a problem, or "" when there is none.
func unenforcedKeyword(schema any, at string) (string, string) {
	obj, ok := schema.(map[string]any)
	if !ok {
		return "", "" // a boolean schema
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		v, here := obj[k], at+"."+k
		switch {
		case !grantKeywords[k]:
			return here, "is not a keyword a grant enforces (JSON Schema 2020-12 validation and applicator keywords, $ref, $defs, $anchor, and title, description, $comment)"
		case k == "$schema" && v != "https://json-schema.org/draft/2020-12/schema":
			return here, "must be https://json-schema.org/draft/2020-12/schema, or left out"
		case k == "format" && !grantFormats[fmt.Sprint(v)]:
			return here, "is not a format a grant checks"
		case schemaValueKeywords[k]:
			if p, msg := unenforcedKeyword(v, here); msg != "" {
				return p, msg
			}
		case schemaListKeywords[k]:
			list, _ := v.([]any)
			for i, sub := range list {
				if p, msg := unenforcedKeyword(sub, fmt.Sprintf("%s[%d]", here, i)); msg != "" {
					return p, msg
				}
			}
		case schemaMapKeywords[k]:
			m, _ := v.(map[string]any)
			names := make([]string, 0, len(m))
			for name := range m {
				names = append(names, name)
			}
			slices.Sort(names)
			for _, name := range names {
				if p, msg := unenforcedKeyword(m[name], here+"."+name); msg != "" {
					return p, msg
				}
			}
		}
	}
	return "", ""
}

func readHTTPGrant(f *Fields) *HTTPGrant {
	h := &HTTPGrant{}
	hosts := f.Strings("allowed_hosts", true)
	if f.Has("allowed_hosts") && (len(hosts) == 0 || len(hosts) > MaxAllowedHosts) {
		f.Problem("allowed_hosts", fmt.Sprintf("must list 1..%d host:port entries", MaxAllowedHosts))
	}
	for i, entry := range hosts {
		n, ok := NormalHostPort(entry)
		if !ok {
			f.Problem(fmt.Sprintf("allowed_hosts[%d]", i), "must be host:port with a port in 1..65535")
			continue
		}
		h.AllowedHosts = append(h.AllowedHosts, n)
	}
	if f.Has("methods") {
		h.Methods = f.Strings("methods", false)
		if len(h.Methods) == 0 {
			f.Problem("methods", "must list at least one method (leave it out to allow every method)")
		}
		for i, m := range h.Methods {
			if !slices.Contains(HTTPMethods, m) {
				f.Problem(fmt.Sprintf("methods[%d]", i), "must be one of "+strings.Join(HTTPMethods, ", "))
			}
		}
	}
	if f.Has("path_prefixes") {
		h.PathPrefixes = f.Strings("path_prefixes", false)
		if len(h.PathPrefixes) == 0 || len(h.PathPrefixes) > MaxPathPrefixes {
			f.Problem("path_prefixes", fmt.Sprintf("must list 1..%d prefixes (leave it out to allow every path)", MaxPathPrefixes))
		}
		for i, p := range h.PathPrefixes {
			if !cleanPathPrefix(p) {
				f.Problem(fmt.Sprintf("path_prefixes[%d]", i),
					fmt.Sprintf("must be an absolute path of at most %d bytes, without . or .. segments, empty segments, percent-encoding, query or fragment", MaxPathPrefixLen))
			}
		}
	}
	return h
}

func cleanPathPrefix(p string) bool {
	if len(p) > MaxPathPrefixLen || !pathPrefixRE.MatchString(p) {
		return false
	}
	trimmed := strings.TrimSuffix(p, "/")
	return p == "/" || path.Clean(trimmed) == trimmed
}

func readKVGrant(f *Fields) *KVGrant {
	k := &KVGrant{}
	if f.Has("namespace") {
		k.Namespace = f.Str("namespace", false)
		if !KVNamespacePattern.MatchString(k.Namespace) {
			f.Problem("namespace", "must match "+KVNamespacePattern.String())
		}
	}
	if f.Has("key_prefix") {
		k.KeyPrefix = f.Str("key_prefix", false)
		if k.KeyPrefix == "" || len(k.KeyPrefix) > MaxKeyPrefixBytes ||
			strings.IndexFunc(k.KeyPrefix, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
			f.Problem("key_prefix", fmt.Sprintf("must be 1..%d bytes without control characters", MaxKeyPrefixBytes))
		}
	}
	k.ReadOnly = f.Bool("read_only", false)
	return k
}

func readExecGrant(f *Fields) *ExecGrant {
	e := &ExecGrant{}
	if f.Has("commands") {
		e.Commands = f.Strings("commands", false)
		if len(e.Commands) == 0 || len(e.Commands) > MaxCommands {
			f.Problem("commands", fmt.Sprintf("must list 1..%d commands (leave it out to allow the config's)", MaxCommands))
		}
		for i, c := range e.Commands {
			if !path.IsAbs(c) || path.Clean(c) != c || strings.IndexByte(c, 0) >= 0 {
				f.Problem(fmt.Sprintf("commands[%d]", i), "must be an absolute, clean path")
			}
		}
	}
	e.MaxTimeout = f.Duration("max_timeout", 0, time.Millisecond, MaxExecTimeout)
	return e
}

// Identity is the domain-separated digest of the canonical policy.
func (g *Grant) Identity() string { return g.identity }

// String never shows the policy.
func (g *Grant) String() string { return "Grant(" + g.identity + ")" }

// MaxCalls is how many calls of its capability one run may make under
// this grant; 0 when only the Plan's max_calls bounds them.
func (g *Grant) MaxCalls() int { return g.maxCalls }

// HTTP is the grant's http section, or nil.
func (g *Grant) HTTP() *HTTPGrant { return g.http }

// KV is the grant's kv section, or nil.
func (g *Grant) KV() *KVGrant { return g.kv }

// Exec is the grant's exec section, or nil.
func (g *Grant) Exec() *ExecGrant { return g.exec }

// SameSection reports whether two grants have the same handler section
// (canonically equal, or both none): one handler may then serve both.
func (g *Grant) SameSection(o *Grant) bool {
	return g.section == o.section && bytes.Equal(g.canonSect, o.canonSect)
}

// FitsHandler checks the grant against the handler kind of the capability
// it is bound to: a section for another kind would be a rule nobody
// enforces, and an http capability's grant must list where it may go. The
// error's path is the section's, inside the policy ("kv").
func (g *Grant) FitsHandler(kind string) error {
	switch {
	case g.section != "" && g.section != kind:
		return &Error{Code: CodeInvalidGrant, Path: g.section,
			Message: fmt.Sprintf("a %s section, but the capability's handler kind is %s", g.section, quoteName(kind))}
	case kind == SectionHTTP && g.http == nil:
		return &Error{Code: CodeInvalidGrant, Path: SectionHTTP,
			Message: "is required for an http capability: it lists the allowed_hosts"}
	}
	return nil
}

// AllowsHost reports whether a normalised host:port is granted.
func (h *HTTPGrant) AllowsHost(hostport string) bool {
	return slices.Contains(h.AllowedHosts, hostport)
}

// AllowsMethod reports whether method is granted.
func (h *HTTPGrant) AllowsMethod(method string) bool {
	return h.Methods == nil || slices.Contains(h.Methods, method)
}

// CoversPath reports whether every request path that starts with p is
// under a granted prefix (open: p may be continued, as a URL template's
// path is by a placeholder) or, when not open, whether p itself is. A path
// is under prefix P when it equals P, or starts with P and P ends in "/",
// or starts with P + "/": "/records" covers "/records/1", never
// "/recordsX".
func (h *HTTPGrant) CoversPath(p string, open bool) bool {
	if h.PathPrefixes == nil {
		return true
	}
	for _, prefix := range h.PathPrefixes {
		switch {
		case !strings.HasPrefix(p, prefix):
		case strings.HasSuffix(prefix, "/"), len(p) > len(prefix) && p[len(prefix)] == '/':
			return true
		case len(p) == len(prefix) && !open:
			return true
		}
	}
	return false
}

// AllowsKey reports whether a kv key (or list prefix) is inside the
// grant's key_prefix.
func (k *KVGrant) AllowsKey(key string) bool { return strings.HasPrefix(key, k.KeyPrefix) }

// AllowsCommand reports whether an exec handler may run argv0.
func (e *ExecGrant) AllowsCommand(argv0 string) bool {
	return e.Commands == nil || slices.Contains(e.Commands, argv0)
}

// NormalHostPort returns host:port with a lower-case host name or the
// canonical form of an IP address, and a decimal port in 1..65535: the one
// spelling in which grants and URLs are compared.
func NormalHostPort(hostport string) (string, bool) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil || host == "" {
		return "", false
	}
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 || strconv.Itoa(n) != port {
		return "", false
	}
	if ip := net.ParseIP(host); ip != nil {
		host = ip.String()
	} else if strings.ContainsAny(host, "%/ ") {
		return "", false
	}
	return net.JoinHostPort(strings.ToLower(host), port), true
}
