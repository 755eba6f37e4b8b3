package plan

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/pattern"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Effect says what a capability may do to the world.
type Effect string

const (
	EffectRead           Effect = "read"
	EffectWrite          Effect = "write"
	EffectExternal       Effect = "external"
	EffectWorkspaceWrite Effect = "workspace_write"
)

// Playback says whether a handler's transport is captured as evidence.
type Playback string

const (
	PlaybackLive     Playback = "live"
	PlaybackCaptured Playback = "captured" // the handler returns transport evidence from the same call frame
)

// Bounds on Spec fields.
const (
	MaxNameLen        = 64
	MaxVersionLen     = 64
	MaxDescriptionLen = 4096
	MaxSchemaBytes    = 256 << 10
	MaxAliases        = 16
	MinLeaseSeconds   = 1
	MaxLeaseSeconds   = 86400
)

var (
	namePattern      = regexp.MustCompile(`^[a-z][a-z0-9_]*(\.[a-z][a-z0-9_]*)*$`)
	handlerKindRE    = pattern.New("a-z", "a-z0-9_", 32)
	handlerIDRE      = pattern.New("a-z", "a-z0-9_.-", 64)
	pythonIdentifier = pattern.New("A-Za-z", "A-Za-z0-9_", 64)
	pythonModuleRE   = pattern.New("a-z", "a-z0-9_", 64)
	reservedModules  = map[string]bool{"agent_runtime": true, "_agent_runtime_host": true, "_agent_runtime_wire": true, "apysup_runner": true}
	pythonKeywords   = map[string]bool{"False": true, "None": true, "True": true, "and": true, "as": true, "assert": true, "async": true, "await": true, "break": true, "class": true, "continue": true, "def": true, "del": true, "elif": true, "else": true, "except": true, "finally": true, "for": true, "from": true, "global": true, "if": true, "import": true, "in": true, "is": true, "lambda": true, "nonlocal": true, "not": true, "or": true, "pass": true, "raise": true, "return": true, "try": true, "while": true, "with": true, "yield": true, "match": true, "case": true, "_": true}
)

// HandlerIdentity names the implementation a capability dispatches to. It is
// bound into the Plan; the implementation itself stays host-private.
type HandlerIdentity struct {
	Kind         string `json:"kind"`
	ID           string `json:"id"`
	Version      string `json:"version"`
	ConfigSHA256 string `json:"config_sha256"` // digest of the handler's canonical configuration
}

// String is "kind/id@version".
func (h HandlerIdentity) String() string { return h.Kind + "/" + h.ID + "@" + h.Version }

// NewHandlerIdentity binds the handler's configuration (a JSON object, or
// nil for none) into its identity by digest.
func NewHandlerIdentity(kind, id, version string, config json.RawMessage) (HandlerIdentity, error) {
	if len(config) == 0 {
		config = json.RawMessage(`{}`)
	}
	canon, err := canonjson.Canonical(config)
	if err != nil || canon[0] != '{' {
		return HandlerIdentity{}, &Error{Code: CodeInvalidHandler, Path: "config", Message: "handler config must be a JSON object"}
	}
	h := HandlerIdentity{Kind: kind, ID: id, Version: version, ConfigSHA256: canonjson.PlainDigest(canon)}
	return h, h.validate()
}

func (h HandlerIdentity) validate() error {
	switch {
	case !handlerKindRE.MatchString(h.Kind):
		return &Error{Code: CodeInvalidHandler, Path: "kind", Message: "handler kind must match " + handlerKindRE.String()}
	case !handlerIDRE.MatchString(h.ID):
		return &Error{Code: CodeInvalidHandler, Path: "id", Message: "handler id must match " + handlerIDRE.String()}
	case h.Version == "" || len(h.Version) > MaxVersionLen || !utf8.ValidString(h.Version):
		return &Error{Code: CodeInvalidHandler, Path: "version", Message: fmt.Sprintf("handler version must be 1..%d bytes", MaxVersionLen)}
	case !canonjson.IsDigest(h.ConfigSHA256):
		return &Error{Code: CodeInvalidHandler, Path: "config_sha256", Message: "handler config digest must be sha256:<64 hex>"}
	}
	return nil
}

// PythonProjection presents a capability to Python guests as
// module.function (and aliases in the same module), and as global names
// the script calls without an import. Module and Function come together;
// either they or Globals may be absent. It is presentation: it grants
// nothing and is not part of the Plan identity.
type PythonProjection struct {
	Module   string   `json:"module,omitempty"`
	Function string   `json:"function,omitempty"`
	Aliases  []string `json:"aliases,omitempty"`
	Globals  []string `json:"globals,omitempty"` // installed in the script's __main__ (globals.go)
}

// Approval requires a human decision before each dispatch.
type Approval struct {
	LeaseSeconds int `json:"lease_seconds"`
}

// Acceptance is what a capability requires of its handler where the
// effect is committed (docs/acceptance.md).
type Acceptance string

const (
	// AcceptanceOff (or none): the Broker's admission is the only check.
	AcceptanceOff Acceptance = "off"
	// AcceptanceNoBlindRetry: dispatched once; after a lost response the
	// provider is read back, else the outcome stays unknown. Never resent.
	AcceptanceNoBlindRetry Acceptance = "no_blind_retry"
	// AcceptanceStrict: the handler must be a provider that declares every
	// guarantee (broker.StrictGuarantees), else the Plan is refused.
	AcceptanceStrict Acceptance = "strict"
)

// Spec defines one capability (SPEC.md section 4).
type Spec struct {
	Name         string
	Version      string
	Description  string
	Effect       Effect
	Playback     Playback
	Handler      HandlerIdentity
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Python       *PythonProjection // optional presentation
	Approval     *Approval         // optional
	Acceptance   Acceptance        // optional: "" is off
}

// Capability is a registered, validated Spec with its compiled schemas.
type Capability struct {
	spec         Spec
	inputSchema  *jsonschema.Schema
	outputSchema *jsonschema.Schema
}

// Spec returns a copy of the normalised Spec.
func (c *Capability) Spec() Spec {
	s := c.spec
	s.InputSchema = append(json.RawMessage(nil), s.InputSchema...)
	s.OutputSchema = append(json.RawMessage(nil), s.OutputSchema...)
	if s.Python != nil {
		p := *s.Python
		p.Aliases = append([]string(nil), p.Aliases...)
		p.Globals = append([]string(nil), p.Globals...)
		s.Python = &p
	}
	if s.Approval != nil {
		a := *s.Approval
		s.Approval = &a
	}
	return s
}

func (c *Capability) Name() string             { return c.spec.Name }
func (c *Capability) Effect() Effect           { return c.spec.Effect }
func (c *Capability) Playback() Playback       { return c.spec.Playback }
func (c *Capability) Handler() HandlerIdentity { return c.spec.Handler }

// Acceptance returns the capability's acceptance requirement (off when
// none was declared).
func (c *Capability) Acceptance() Acceptance {
	if c.spec.Acceptance == "" {
		return AcceptanceOff
	}
	return c.spec.Acceptance
}

// Approval returns the approval requirement, or nil when none is required.
func (c *Capability) Approval() *Approval {
	if c.spec.Approval == nil {
		return nil
	}
	a := *c.spec.Approval
	return &a
}

// ValidateInput checks decoded arguments (as from canonjson.ParseStrict)
// against the input schema.
func (c *Capability) ValidateInput(v any) error { return c.inputSchema.Validate(v) }

// ValidateOutput checks a decoded handler result against the output schema.
func (c *Capability) ValidateOutput(v any) error { return c.outputSchema.Validate(v) }

// ValidName reports whether s is a well-formed capability name.
func ValidName(s string) bool { return len(s) <= MaxNameLen && namePattern.MatchString(s) }

// newCapability normalises and validates s.
func newCapability(s Spec) (*Capability, error) {
	var problems Problems
	add := func(code, path, format string, args ...any) {
		problems = append(problems, &Error{Code: code, Path: path, Message: fmt.Sprintf(format, args...)})
	}
	s.Version = strings.TrimSpace(s.Version)
	s.Description = strings.TrimSpace(s.Description)
	if !ValidName(s.Name) {
		add(CodeInvalidName, "name", "capability name must match %s and be at most %d characters", namePattern, MaxNameLen)
	}
	if s.Version == "" || len(s.Version) > MaxVersionLen || !utf8.ValidString(s.Version) {
		add(CodeInvalidVersion, "version", "version must be 1..%d bytes of UTF-8", MaxVersionLen)
	}
	if len(s.Description) > MaxDescriptionLen || !utf8.ValidString(s.Description) {
		add(CodeInvalidDescription, "description", "description must be at most %d bytes of UTF-8", MaxDescriptionLen)
	}
	switch s.Effect {
	case EffectRead, EffectWrite, EffectExternal, EffectWorkspaceWrite:
	default:
		add(CodeInvalidEffect, "effect", "effect must be one of read, write, external, workspace_write")
	}
	switch s.Playback {
	case PlaybackLive, PlaybackCaptured:
	default:
		add(CodeInvalidPlayback, "playback", "playback must be live or captured")
	}
	if err := s.Handler.validate(); err != nil {
		problems = append(problems, at("handler", err))
	}
	c := &Capability{}
	var err error
	if s.InputSchema, c.inputSchema, err = compileSchema(s.InputSchema); err != nil {
		add(CodeInvalidSchema, "input_schema", "%v", err)
	}
	if s.OutputSchema, c.outputSchema, err = compileSchema(s.OutputSchema); err != nil {
		add(CodeInvalidSchema, "output_schema", "%v", err)
	}
	if s.Python != nil {
		for _, e := range validatePython(s.Python) {
			problems = append(problems, at("python", e))
		}
	}
	if s.Approval != nil && (s.Approval.LeaseSeconds < MinLeaseSeconds || s.Approval.LeaseSeconds > MaxLeaseSeconds) {
		add(CodeInvalidApproval, "approval.lease_seconds", "lease_seconds must be %d..%d", MinLeaseSeconds, MaxLeaseSeconds)
	}
	switch s.Acceptance {
	case AcceptanceOff:
		s.Acceptance = "" // one spelling of off: it does not change the Plan identity
	case "", AcceptanceNoBlindRetry, AcceptanceStrict:
	default:
		add(CodeInvalidAcceptance, "acceptance", "acceptance must be off, no_blind_retry or strict")
	}
	if len(problems) > 0 {
		return nil, problems
	}
	c.spec = s
	return c, nil
}

func validatePython(p *PythonProjection) []error {
	errs := validatePythonGlobals(p)
	if p.Module == "" && p.Function == "" && len(p.Aliases) == 0 && p.Globals != nil {
		return errs // globals only
	}
	if !pythonModuleRE.MatchString(p.Module) || pythonKeywords[p.Module] {
		errs = append(errs, &Error{Code: CodeInvalidPython, Path: "module", Message: "module must be a lowercase Python identifier matching " + pythonModuleRE.String()})
	} else if stdlibModules[p.Module] || reservedModules[p.Module] {
		errs = append(errs, &Error{Code: CodePythonCollision, Path: "module", Message: fmt.Sprintf("module %q would shadow a standard library or apysup module", p.Module)})
	}
	if !pythonIdentifier.MatchString(p.Function) || pythonKeywords[p.Function] {
		errs = append(errs, &Error{Code: CodeInvalidPython, Path: "function", Message: "function must be a public Python identifier matching " + pythonIdentifier.String()})
	}
	if len(p.Aliases) > MaxAliases {
		errs = append(errs, &Error{Code: CodeInvalidPython, Path: "aliases", Message: fmt.Sprintf("at most %d aliases", MaxAliases)})
	}
	for i, a := range p.Aliases {
		if !pythonIdentifier.MatchString(a) || pythonKeywords[a] {
			errs = append(errs, &Error{Code: CodeInvalidPython, Path: fmt.Sprintf("aliases[%d]", i), Message: "alias must be a public Python identifier"})
		}
	}
	return errs
}

// refuseLoader keeps schema compilation hermetic: no $ref may reach a file
// or the network.
type refuseLoader struct{}

func (refuseLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema reference %q refused", url)
}

// compileSchema canonicalises and compiles a JSON Schema (2020-12). An
// absent schema means {} (anything).
func compileSchema(raw json.RawMessage) (json.RawMessage, *jsonschema.Schema, error) {
	if len(raw) == 0 {
		raw = json.RawMessage(`{}`)
	}
	if len(raw) > MaxSchemaBytes {
		return nil, nil, fmt.Errorf("schema larger than %d bytes", MaxSchemaBytes)
	}
	canon, err := canonjson.Canonical(raw)
	if err != nil {
		return nil, nil, fmt.Errorf("schema is not valid JSON: %v", err)
	}
	_, sch, err := compileSchemaDoc(canon, false)
	if err != nil {
		return nil, nil, err
	}
	return canon, sch, nil
}

// compileSchemaDoc compiles raw (strict JSON, an object or a boolean) and
// returns it decoded too; assertFormat makes format a validation keyword
// rather than an annotation. The compiler's error is wrapped, so that
// schemaErrorPath can find where the schema fails.
func compileSchemaDoc(raw json.RawMessage, assertFormat bool) (any, *jsonschema.Schema, error) {
	if len(raw) > MaxSchemaBytes {
		return nil, nil, fmt.Errorf("schema larger than %d bytes", MaxSchemaBytes)
	}
	doc, err := canonjson.ParseStrict(raw, MaxSchemaBytes)
	if err != nil {
		return nil, nil, err
	}
	if _, isObject := doc.(map[string]any); !isObject && doc != true && doc != false {
		return nil, nil, fmt.Errorf("schema must be an object or a boolean")
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(refuseLoader{})
	if assertFormat {
		c.AssertFormat()
	}
	const loc = "apysup:///schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, nil, err
	}
	sch, err := c.Compile(loc)
	if err != nil {
		return nil, nil, fmt.Errorf("schema does not compile: %w", err)
	}
	return doc, sch, nil
}

// schemaErrorPath is where in a schema the compiler found it invalid
// against the metaschema, as a Fields path suffix (".properties.a[0]"),
// or "". It names keys of the schema, never its values.
func schemaErrorPath(err error) string {
	var sve *jsonschema.SchemaValidationError
	var ve *jsonschema.ValidationError
	if !errors.As(err, &sve) || !errors.As(sve.Err, &ve) {
		return ""
	}
	var b strings.Builder
	for _, seg := range deepestLocation(ve) {
		if _, err := strconv.Atoi(seg); err == nil {
			b.WriteString("[" + seg + "]")
		} else {
			b.WriteString("." + seg)
		}
	}
	return b.String()
}

// deepestLocation is the instance location of the deepest cause of a
// validation error; of equally deep ones, the least in string order. The
// validator visits object members in map order, so the order of causes
// is not stable: this choice is.
func deepestLocation(e *jsonschema.ValidationError) []string {
	best := e.InstanceLocation
	for _, c := range e.Causes {
		loc := deepestLocation(c)
		if len(loc) > len(best) || (len(loc) == len(best) && strings.Join(loc, "/") < strings.Join(best, "/")) {
			best = loc
		}
	}
	return best
}
