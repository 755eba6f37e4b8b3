package native

import (
	"fmt"

	"github.com/apysup/apysup/internal/sandbox"
)

// Codes of refusals and setup failures that do not come from the doctor
// (whose codes, e.g. userns_unavailable, are passed through unchanged).
const (
	CodeInvalidJob      = sandbox.CodeInvalidJob
	CodeInvalidLimits   = sandbox.CodeInvalidLimits
	CodeUIDsExhausted   = "uid_range_exhausted"
	CodeSetupFailed     = sandbox.CodeSetupFailed
	CodeCleanupFailed   = "cleanup_failed"
	CodeCanceled        = sandbox.CodeCanceled
	CodeKilledBySignal  = sandbox.CodeKilledBySignal
	CodeOutcomeTooLarge = sandbox.CodeOutcomeTooLarge
)

// Error is a typed refusal or setup failure.
type Error struct {
	Status sandbox.Status // StatusRefused or StatusSetupFailed
	Code   string
	Err    error
}

func (e *Error) Error() string {
	return fmt.Sprintf("native: %s (%s): %v", e.Status, e.Code, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode is the error's stable code.
func (e *Error) ErrorCode() string { return e.Code }

func refused(code string, format string, args ...any) *Error {
	return &Error{Status: sandbox.StatusRefused, Code: code, Err: fmt.Errorf(format, args...)}
}

func setupFailed(err error) *Error {
	return &Error{Status: sandbox.StatusSetupFailed, Code: CodeSetupFailed, Err: err}
}
