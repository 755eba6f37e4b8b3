package apysup_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/plan"
)

// The error convention (RATIONALE.md, "One error convention"): every typed
// error exposes its stable code through ErrorCode, found with errors.As
// (plan.CodeOf), however deeply it is wrapped, and a list of problems
// unwraps to its problems.
func TestErrorConvention(t *testing.T) {
	_, parseErr := plan.ParseManifest([]byte(`{"schema_version":"apysup.manifest.v1"}`))
	m, err := plan.ParseManifest([]byte(`{"schema_version":"apysup.manifest.v1","max_calls":1,"capabilities":[
		{"name":"a.b","version":"1","effect":"read","playback":"live","handler":{"kind":"builtin","id":"nope","version":"1"}}],
		"grants":[{"capability":"a.b","policy":{}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	_, sealErr := m.Seal(handlers.Checker{})
	_, limitsErr := sandbox.Limits{MemoryBytes: 1}.WithDefaults()
	verifyErr := &broker.VerifyError{Problems: []broker.VerifyProblem{{Index: 0, Code: broker.CodeReceiptCallID}}}
	for _, tc := range []struct {
		err  error
		code string
	}{
		{parseErr, plan.CodeInvalidManifest}, // Problems: the first problem's code
		{sealErr, handlers.CodeUnknownHandler},
		{canonjson.Validate([]byte(`{"a":1,"a":2}`), 100), canonjson.CodeOf(canonjson.Validate([]byte(`{"a":1,"a":2}`), 100))},
		{limitsErr, sandbox.CodeInvalidLimits},
		{verifyErr, broker.CodeReceiptCallID},
		{&handlers.Error{Code: handlers.CodeKVBadKey}, handlers.CodeKVBadKey},
		{&sandbox.WorkspaceError{Code: sandbox.CodeWorkspaceTooLarge}, sandbox.CodeWorkspaceTooLarge},
		{&native.Error{Status: sandbox.StatusRefused, Code: native.CodeInvalidLimits, Err: limitsErr}, native.CodeInvalidLimits},
		{&wazero.UnavailableError{Code: wazero.ErrorCodeGuestMissing}, wazero.ErrorCodeGuestMissing},
		{&rpc.ApprovalError{Code: rpc.CodeApprovalNotFound}, rpc.CodeApprovalNotFound},
		{&broker.AcceptanceError{Capability: "a.b", Missing: broker.StrictGuarantees}, broker.CodeAcceptanceUnsupported},
		{&broker.RevocationError{Code: broker.CodeGrantNotRevocable, Capability: "a.b"}, broker.CodeGrantNotRevocable},
	} {
		if tc.err == nil || tc.code == "" {
			t.Fatalf("no error or no code: %v %q", tc.err, tc.code)
		}
		wrapped := fmt.Errorf("context: %w", tc.err)
		if got := plan.CodeOf(wrapped); got != tc.code {
			t.Errorf("%T: CodeOf = %q, want %q", tc.err, got, tc.code)
		}
	}
	// Lists unwrap to every problem.
	var ps plan.Problems
	if !errors.As(sealErr, &ps) || len(ps.Unwrap()) != len(ps) {
		t.Fatalf("seal: %v", sealErr)
	}
	var le *sandbox.LimitError
	if !errors.As(limitsErr, &le) || le.Field != "memory_bytes" {
		t.Fatalf("limits: %v", limitsErr)
	}
	var vp broker.VerifyProblem
	if !errors.As(verifyErr, &vp) || vp.Code != broker.CodeReceiptCallID {
		t.Fatalf("verify: %v", verifyErr)
	}
}
