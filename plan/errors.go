package plan

import (
	"errors"
	"fmt"
	"strings"
)

// Stable error codes of plan registration, sealing and presentation.
const (
	CodeInvalidName           = "invalid_name"
	CodeDuplicateCapability   = "duplicate_capability"
	CodeInvalidVersion        = "invalid_version"
	CodeInvalidDescription    = "invalid_description"
	CodeInvalidEffect         = "invalid_effect"
	CodeInvalidPlayback       = "invalid_playback"
	CodeInvalidHandler        = "invalid_handler"
	CodeInvalidSchema         = "invalid_schema"
	CodeInvalidPython         = "invalid_python"
	CodePythonCollision       = "python_collision"
	CodeInvalidApproval       = "invalid_approval"
	CodeInvalidAcceptance     = "invalid_acceptance"
	CodeInvalidMaxCalls       = "invalid_max_calls"
	CodeInvalidGrant          = "invalid_grant"
	CodeGrantTooLarge         = "grant_too_large"
	CodeGrantUnknown          = "grant_unknown_capability"
	CodeDuplicateGrant        = "duplicate_grant"
	CodeCapabilityUngranted   = "capability_ungranted"
	CodeRegistrySealed        = "registry_sealed"
	CodeInvalidProgramSurface = "invalid_program_surface"
	CodeInvalidParent         = "invalid_parent"
	CodeInvalidManifest       = "invalid_manifest"
	CodeInvalidToolFormat     = "invalid_tool_format"
	CodeInvalidToolName       = "invalid_tool_name"
	CodeToolNameCollision     = "tool_name_collision"
	CodeToolSchemaNotObject   = "tool_schema_not_object"
)

// Error is a typed plan refusal. Path is a JSON path into the manifest
// (e.g. "capabilities[1].effect") when the problem came from one.
type Error struct {
	Code    string
	Path    string
	Message string
}

func (e *Error) Error() string {
	if e.Path != "" {
		return fmt.Sprintf("%s: %s (%s)", e.Path, e.Message, e.Code)
	}
	return fmt.Sprintf("%s (%s)", e.Message, e.Code)
}

func errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode is the error's stable code (the project's error convention:
// every typed error the project returns has one; CodeOf finds it).
func (e *Error) ErrorCode() string { return e.Code }

// coded is the error convention: a typed error exposes its stable code.
type coded interface {
	error
	ErrorCode() string
}

// CodeOf returns the stable code of the first error in err's tree that
// has one (any of the project's typed errors: plan, handlers, broker,
// sandbox), or "". For Problems it is the first problem's code.
func CodeOf(err error) string {
	var c coded
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}

// Problems is every problem found in one manifest, reported at once.
type Problems []*Error

// Unwrap exposes each problem to errors.Is and errors.As.
func (p Problems) Unwrap() []error {
	out := make([]error, len(p))
	for i, e := range p {
		out[i] = e
	}
	return out
}

// unique drops repeats (two checks that find the same problem at the same
// path), keeping the first of each.
func (p Problems) unique() Problems {
	seen := make(map[Error]bool, len(p))
	out := p[:0:0]
	for _, e := range p {
		if !seen[*e] {
			seen[*e] = true
			out = append(out, e)
		}
	}
	return out
}

func (p Problems) Error() string {
	lines := make([]string, len(p))
	for i, e := range p {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// at prefixes the path of err (if it is an *Error) with path.
func at(path string, err error) *Error {
	var e *Error
	if !errors.As(err, &e) {
		return &Error{Code: CodeInvalidManifest, Path: path, Message: err.Error()}
	}
	out := *e
	switch {
	case path == "":
	case out.Path == "":
		out.Path = path
	case strings.HasPrefix(out.Path, "["):
		out.Path = path + out.Path
	default:
		out.Path = path + "." + out.Path
	}
	return &out
}
