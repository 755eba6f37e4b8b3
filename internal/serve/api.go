package serve

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/journal"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// Codes of the API's refusals. Each has one HTTP status (statusOf); a
// manifest's refusal carries the plan package's code (plan.CodeOf) with
// 400, a workspace's the sandbox package's workspace codes.
const (
	CodeInvalidRequest    = "invalid_request"          // 400: malformed JSON, an unknown field, a value out of range
	CodeRequestTooLarge   = "request_too_large"        // 413: the body is over MaxRequestBytes
	CodeUnauthorized      = "unauthorized"             // 401: no or a wrong bearer token (TCP)
	CodeForbidden         = "forbidden"                // 403: the Unix peer is neither root nor in the socket's group
	CodeHandlerNotAllowed = "handler_not_allowed"      // 403: the manifest names a handler kind the server does not serve
	CodeNotFound          = "not_found"                // 404: no such route
	CodeRunNotFound       = "run_not_found"            // 404: no such run (or it left the history)
	CodePlanNotFound      = "plan_not_found"           // 404: plan_sha256 is not in the cache: POST /v1/plans first
	CodeApprovalNotFound  = "approval_not_found"       // 404: no such waiting approval request
	CodeMethodNotAllowed  = "method_not_allowed"       // 405
	CodeApprovalDecided   = "approval_already_decided" // 409: the request was decided already
	CodeOverloaded        = "overloaded"               // 429: max-concurrent runs and a full queue; Retry-After says when to retry
	CodeShuttingDown      = "shutting_down"            // 503: the server drains and admits nothing
	CodeInternal          = "internal_error"           // 500
)

var statusOf = map[string]int{
	CodeInvalidRequest: http.StatusBadRequest, CodeRequestTooLarge: http.StatusRequestEntityTooLarge,
	CodeUnauthorized: http.StatusUnauthorized, CodeForbidden: http.StatusForbidden,
	CodeHandlerNotAllowed: http.StatusForbidden, CodeNotFound: http.StatusNotFound,
	CodeRunNotFound: http.StatusNotFound, CodePlanNotFound: http.StatusNotFound,
	CodeApprovalNotFound: http.StatusNotFound, CodeMethodNotAllowed: http.StatusMethodNotAllowed,
	CodeApprovalDecided: http.StatusConflict, CodeOverloaded: http.StatusTooManyRequests,
	CodeShuttingDown: http.StatusServiceUnavailable, CodeInternal: http.StatusInternalServerError,
	journal.CodeUnavailable: http.StatusServiceUnavailable, journal.CodeRunActive: http.StatusConflict,
	broker.CodeUnknownCapability: http.StatusNotFound, broker.CodeGrantNotRevocable: http.StatusConflict,
	broker.CodeRevocationFailed:   http.StatusServiceUnavailable,
	sandbox.CodeWorkspaceTooLarge: http.StatusRequestEntityTooLarge,
}

// HTTPStatus is the status of a refusal's code: 400 for the codes of a
// refused manifest or workspace input.
func HTTPStatus(code string) int {
	if s, ok := statusOf[code]; ok {
		return s
	}
	return http.StatusBadRequest
}

// Error is every refusal's body. Message never quotes the request.
type Error struct {
	Code    string `json:"error_code"`
	Message string `json:"error"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

func refusal(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Bounds of a request.
const (
	// MaxRequestBytes bounds a request body: the script, the manifest and
	// the workspace, base64 included.
	MaxRequestBytes = 8 << 20
	maxArgs         = 256
	maxArgBytes     = 4096
	maxPathBytes    = 1024
)

// Approval modes of a run.
const (
	ApproveDeny = "deny" // default: a call that needs approval is rejected
	ApproveAuto = "auto" // approved (still recorded)
	ApproveAPI  = "api"  // waits for POST /v1/approvals/{id}/approve|reject
)

// RunRequest is POST /v1/runs's body.
type RunRequest struct {
	Source string   `json:"source"`
	Args   []string `json:"args,omitempty"`
	// ScriptName is the script's file name in the sandbox
	// (/run/apysup/job/NAME: its sys.argv[0], __file__ and tracebacks);
	// empty is main.py. apysup run --server sends the local
	// script's name, -c or -, as a local run names it.
	ScriptName string `json:"script_name,omitempty"`
	// At most one of PlanSHA256 (a Plan sealed by POST /v1/plans) and
	// Manifest; neither is the empty Plan.
	PlanSHA256 string          `json:"plan_sha256,omitempty"`
	Manifest   json.RawMessage `json:"manifest,omitempty"`
	Limits     RunLimits       `json:"limits,omitzero"`
	Backend    string          `json:"backend,omitempty"` // native (default) or wazero
	Surface    string          `json:"surface,omitempty"` // direct, programmatic (default) or both
	Parent     string          `json:"parent,omitempty"`  // the parent call id (default main)
	Approve    string          `json:"approve,omitempty"` // deny (default), auto or api
	// Workspace is copied into /workspace: relative path -> content
	// (base64 in JSON).
	Workspace map[string][]byte `json:"workspace,omitempty"`
	// WorkspaceTar is copied into /workspace too: an uncompressed tar
	// archive of regular files and directories (base64 in JSON; see
	// seedFromTar for what is refused). Exclusive with Workspace.
	WorkspaceTar []byte `json:"workspace_tar,omitempty"`
	// Export returns the final workspace (after an ok run) in the result's
	// exported file map.
	Export bool `json:"export,omitempty"`
	// IdempotencyKey runs under a key of the server's journal (apysup
	// serve --journal DIR): a completed run's result comes back without
	// running anything; an interrupted one runs again without dispatching
	// any call twice (docs/spec.md section 10).
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// RunLimits are a run's limits; zero is the default.
type RunLimits struct {
	TimeoutMs   int64   `json:"timeout_ms,omitempty"`
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	Pids        int64   `json:"pids,omitempty"`
	CPUs        float64 `json:"cpus,omitempty"`
}

// RunResult is a finished run: the RunResult `apysup run --json` prints,
// with its schema_version, plus the exported workspace when asked.
type RunResult struct {
	SchemaVersion string `json:"schema_version"`
	supervisor.Result
	Exported map[string][]byte `json:"exported,omitempty"`
}

// RunResultSchema is RunResult's schema_version, as the CLI prints it.
const RunResultSchema = "apysup.run_result.v1"

// RunState is GET /v1/runs/{id}: the run's state and, once finished, its
// result.
type RunState struct {
	RunID  string     `json:"run_id"`
	State  string     `json:"state"` // queued, running or finished
	Result *RunResult `json:"result,omitempty"`
}

// States of a run.
const (
	StateQueued   = "queued"
	StateRunning  = "running"
	StateFinished = "finished"
)

// RunAccepted is the 202 answer of POST /v1/runs?wait=false.
type RunAccepted struct {
	RunID string `json:"run_id"`
}

// PlanRequest is POST /v1/plans's body; PlanResponse its answer: the
// Plan's identity and the tools it presents, never its grants.
type PlanRequest struct {
	Manifest json.RawMessage `json:"manifest"`
}

type PlanResponse struct {
	PlanSHA256 string            `json:"plan_sha256"`
	Tools      []plan.ToolSchema `json:"tools"`
}

// RevokeRequest is POST /v1/grants/revoke's body: a capability of a Plan
// sealed by POST /v1/plans, whose grant is revoked at the provider that
// serves the Plan's runs. The answer is a broker.Revocation.
type RevokeRequest struct {
	PlanSHA256 string `json:"plan_sha256"`
	Capability string `json:"capability"`
}

// Decision is the answer of POST /v1/approvals/{id}/approve|reject.
type Decision struct {
	ID    string `json:"id"`
	State string `json:"state"`
}

// validRun is a parsed, checked RunRequest.
type validRun struct {
	RunRequest
	limits  sandbox.Limits
	surface plan.Surface
	seed    *seed // the checked workspace, from Workspace or WorkspaceTar; nil: none
}

// defaultScriptName is a run's script name when its request names none.
const defaultScriptName = "main.py"

// maxScriptName bounds script_name: a file name on Linux.
const maxScriptName = 255

// checkScriptName refuses a script name that is no plain file name, or
// one the job directory reserves (sandbox.Job.ScriptName: the prelude's,
// and every name starting with a dot, "." and ".." included).
func checkScriptName(name string) error {
	switch {
	case len(name) > maxScriptName:
		return fmt.Errorf("longer than %d bytes", maxScriptName)
	case strings.ContainsAny(name, "/\x00"):
		return errors.New("not a file name")
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		// A newline in it would split a traceback's line in two.
		return errors.New("a control character in a file name")
	}
	_, err := sandbox.Job{ScriptPath: name}.ScriptName()
	return err
}

// ParseRunRequest reads and checks a run request: strict JSON (no unknown
// field, one value), bounded fields, a clean workspace file map.
func ParseRunRequest(body []byte) (*validRun, error) {
	var req RunRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	bad := func(format string, args ...any) (*validRun, error) {
		return nil, refusal(CodeInvalidRequest, format, args...)
	}
	switch {
	case req.Source == "":
		return bad("source is required")
	case len(req.Source) > sandbox.MaxScriptBytes:
		return bad("source is larger than %d bytes", sandbox.MaxScriptBytes)
	case len(req.Args) > maxArgs:
		return bad("more than %d args", maxArgs)
	case req.PlanSHA256 != "" && len(req.Manifest) > 0:
		return bad("plan_sha256 and manifest are exclusive")
	case len(req.Workspace) > 0 && len(req.WorkspaceTar) > 0:
		return bad("workspace and workspace_tar are exclusive")
	case len(req.PlanSHA256) > 80:
		return bad("plan_sha256 is not a digest")
	case req.IdempotencyKey != "" && !journal.ValidKey(req.IdempotencyKey):
		return bad("idempotency_key: 1-128 characters of [A-Za-z0-9._:-], starting with a letter or digit")
	}
	if req.ScriptName == "" {
		req.ScriptName = defaultScriptName
	} else if err := checkScriptName(req.ScriptName); err != nil {
		return bad("script_name: %v", err)
	}
	for _, a := range req.Args {
		if len(a) > maxArgBytes || strings.IndexByte(a, 0) >= 0 {
			return bad("an arg is longer than %d bytes or holds NUL", maxArgBytes)
		}
	}
	v := &validRun{RunRequest: req, surface: plan.SurfaceProgrammatic}
	if req.Surface != "" {
		s, err := plan.ParseSurface(req.Surface)
		if err != nil {
			return bad("surface must be direct, programmatic or both")
		}
		v.surface = s
	}
	switch req.Backend {
	case "", supervisor.BackendNative, supervisor.BackendWazero:
	default:
		return bad("backend must be native or wazero")
	}
	switch req.Approve {
	case "", ApproveDeny, ApproveAuto, ApproveAPI:
	default:
		return bad("approve must be deny, auto or api")
	}
	if v.surface == plan.SurfaceDirect {
		v.Parent = ""
	} else if v.Parent == "" {
		v.Parent = "main"
	}
	var err error
	if v.limits, err = req.Limits.sandbox(); err != nil {
		return nil, err
	}
	switch {
	case len(req.WorkspaceTar) > 0:
		v.seed, err = seedFromTar(req.WorkspaceTar)
	case len(req.Workspace) > 0:
		v.seed, err = seedFromMap(req.Workspace)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// sandbox is the limits with defaults, each in the CLI's range.
func (l RunLimits) sandbox() (sandbox.Limits, error) {
	out := sandbox.DefaultLimits()
	bad := func(field, want string) (sandbox.Limits, error) {
		return sandbox.Limits{}, refusal(CodeInvalidRequest, "limits.%s: want %s", field, want)
	}
	if l.TimeoutMs != 0 {
		if l.TimeoutMs < 0 || l.TimeoutMs > int64(24*time.Hour/time.Millisecond) {
			return bad("timeout_ms", "1..86400000")
		}
		out.Timeout = time.Duration(l.TimeoutMs) * time.Millisecond
	}
	if l.MemoryBytes != 0 {
		if l.MemoryBytes < 1<<20 || l.MemoryBytes > 1<<40 {
			return bad("memory_bytes", "1 MiB..1 TiB")
		}
		out.MemoryBytes = l.MemoryBytes
	}
	if l.Pids != 0 {
		if l.Pids < 0 || l.Pids > 1<<22 {
			return bad("pids", "1..4194304")
		}
		out.Pids = l.Pids
	}
	if l.CPUs != 0 {
		if !(l.CPUs >= 0.01 && l.CPUs <= 1024) {
			return bad("cpus", "0.01..1024")
		}
		out.CPUs = l.CPUs
	}
	return out, nil
}

// validWorkspacePath: p is a clean, relative, slash-separated path of at
// most maxPathBytes of UTF-8 without control characters or backslashes.
func validWorkspacePath(p string) bool {
	if p == "" || len(p) > maxPathBytes || !utf8.ValidString(p) || path.Clean(p) != p ||
		strings.HasPrefix(p, "/") || p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return false
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '\\' {
			return false
		}
	}
	return true
}

// ParsePlanRequest reads POST /v1/plans's body.
func ParsePlanRequest(body []byte) (*PlanRequest, error) {
	var req PlanRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	if len(req.Manifest) == 0 || string(req.Manifest) == "null" {
		return nil, refusal(CodeInvalidRequest, "manifest is required")
	}
	return &req, nil
}

// ParseRevokeRequest reads POST /v1/grants/revoke's body.
func ParseRevokeRequest(body []byte) (*RevokeRequest, error) {
	var req RevokeRequest
	if err := decodeStrict(body, &req); err != nil {
		return nil, err
	}
	switch {
	case req.PlanSHA256 == "" || len(req.PlanSHA256) > 80:
		return nil, refusal(CodeInvalidRequest, "plan_sha256 is required: a digest from POST /v1/plans")
	case req.Capability == "" || len(req.Capability) > 128:
		return nil, refusal(CodeInvalidRequest, "capability is required: a capability name of the Plan")
	}
	return &req, nil
}

// decodeStrict decodes one JSON value with no unknown field, as every
// strict document of the project is decoded (canonjson.DecodeStrict):
// encoding/json alone keeps the last of two keys, replaces invalid UTF-8
// and lone surrogates with U+FFFD and takes "Source" for "source", so a
// body could say one thing to a reader and another to the server. A
// manifest carried inside may nest as deeply as one posted alone. The
// refusal names the strict parser's code, never the body (an unknown
// field's name, a map key).
func decodeStrict(body []byte, v any) error {
	err := canonjson.DecodeStrictCarrier(body, len(body), 1, v)
	switch code := canonjson.CodeOf(err); {
	case err == nil:
		return nil
	case code == canonjson.CodeTypeMismatch:
		return refusal(CodeInvalidRequest, "a field has the wrong type")
	case code == canonjson.CodeUnknownField:
		return refusal(CodeInvalidRequest, "the body is not a JSON object of the expected fields")
	case code != "":
		return refusal(CodeInvalidRequest, "the body is not strict JSON (%s)", code)
	}
	return refusal(CodeInvalidRequest, "the body is not a JSON object of the expected fields")
}
