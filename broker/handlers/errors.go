package handlers

import (
	"errors"

	"github.com/apysup/apysup/plan"
)

// Stable codes of a failed handler call (*Error). The broker answers every
// handler error with handler_error; these codes are for the host's tests
// and diagnostics and are never more specific than the code itself.
const (
	CodeBadArguments = "bad_arguments" // the arguments do not fit the handler (beyond the input schema)
	CodeCancelled    = "cancelled"     // the caller's context ended first

	CodeExecFailed         = "exec_failed"           // could not start, non-zero exit, or killed by a signal
	CodeExecTimeout        = "exec_timeout"          // the configured timeout passed; the process group was killed
	CodeExecOutputTooLarge = "exec_output_too_large" // stdout exceeded max_output_bytes; the process group was killed
	CodeExecBadOutput      = "exec_bad_output"       // stdout is not exactly one strict JSON value

	// An exec handler with a provider section (docs/provider-protocol.md).
	CodeProviderBadAnswer       = "provider_bad_answer"       // the tool's answer is malformed, too large, of the wrong kind, missing a member or about another binding: the outcome is unknown
	CodeProviderProfileMismatch = "provider_profile_mismatch" // the tool's profile promises less than the handler config declares; nothing was presented
	CodeProviderRefused         = "provider_refused"          // a plain call got no result: rejected, conflict, presentation or epoch refused, or a replay whose result was compacted
	CodeProviderNoBinding       = "provider_no_binding"       // a call reached the handler without the effect binding the Broker gives every dispatch

	CodeHTTPMissingPlaceholder = "http_missing_placeholder" // a {name} in the URL template has no argument
	CodeHTTPBadArgument        = "http_bad_argument"        // a placeholder value is not a usable string or number, or an argument is unused
	CodeHTTPHostRefused        = "http_host_refused"        // the host:port (or its resolved address) is not in the grant's allowed_hosts
	CodeHTTPPathRefused        = "http_path_refused"        // the request's path is not under the grant's path_prefixes
	CodeHTTPRedirectRefused    = "http_redirect_refused"    // the server answered with a redirect; none is followed
	CodeHTTPTimeout            = "http_timeout"             // the configured timeout passed
	CodeHTTPBodyTooLarge       = "http_body_too_large"      // the response body exceeded max_body_bytes
	CodeHTTPBodyNotUTF8        = "http_body_not_utf8"       // a non-JSON response body is not valid UTF-8
	CodeHTTPFailed             = "http_failed"              // any other transport failure

	CodeKVBadKey        = "kv_bad_key"         // empty, longer than MaxKVKeyBytes, or with control characters
	CodeKVValueTooLarge = "kv_value_too_large" // canonical value longer than MaxKVValueBytes
	CodeKVFailed        = "kv_failed"          // the database refused the operation
	CodeKVKeyNotGranted = "kv_key_not_granted" // the key (or list prefix) is outside the grant's key_prefix

	CodeKVAcceptanceRequired  = "kv_acceptance_required"  // a strict kv handler was called without an effect binding
	CodeKVAcceptanceRefused   = "kv_acceptance_refused"   // a strict kv handler's Call was not accepted (rejected, conflict, presentation or epoch refused)
	CodeKVProviderUnavailable = "kv_provider_unavailable" // the provider's store or epoch registry cannot answer (rolled back behind the fence, unbound, unreadable, clock gone back)
)

// Error is a typed handler failure. Its text is the code and a fixed
// description: never arguments, command lines, URLs, headers, stderr or
// anything else that could carry a secret.
type Error struct {
	Code string
	err  error // only context errors, so errors.Is(err, context.Canceled) works
}

var descriptions = map[string]string{
	CodeBadArguments:            "the arguments do not fit the handler",
	CodeCancelled:               "the call was cancelled",
	CodeExecFailed:              "the command failed",
	CodeExecTimeout:             "the command did not finish in time and was killed",
	CodeExecOutputTooLarge:      "the command wrote more output than allowed and was killed",
	CodeExecBadOutput:           "the command did not write exactly one JSON value",
	CodeHTTPMissingPlaceholder:  "a URL placeholder has no argument",
	CodeHTTPBadArgument:         "an argument cannot be used in the request",
	CodeHTTPHostRefused:         "the request's host is not allowed by the grant",
	CodeHTTPPathRefused:         "the request's path is not allowed by the grant",
	CodeHTTPRedirectRefused:     "the server answered with a redirect, which is not followed",
	CodeHTTPTimeout:             "the request did not finish in time",
	CodeHTTPBodyTooLarge:        "the response body is larger than allowed",
	CodeHTTPBodyNotUTF8:         "the response body is not UTF-8 text",
	CodeHTTPFailed:              "the request failed",
	CodeKVBadKey:                "the key is empty, too long or has control characters",
	CodeKVValueTooLarge:         "the value is larger than allowed",
	CodeKVFailed:                "the store refused the operation",
	CodeKVKeyNotGranted:         "the key is not allowed by the grant",
	CodeKVAcceptanceRequired:    "a strict kv handler commits only through provider acceptance",
	CodeKVAcceptanceRefused:     "the provider did not accept the call",
	CodeKVProviderUnavailable:   "the provider's store cannot answer",
	CodeProviderBadAnswer:       "the provider tool's answer is not a well-formed answer to the request; the outcome is unknown",
	CodeProviderProfileMismatch: "the provider tool declares less than the handler config; nothing was presented",
	CodeProviderRefused:         "the provider gave no result for the call",
	CodeProviderNoBinding:       "the call has no effect binding to present",
}

func (e *Error) Error() string { return "handlers: " + e.Code + ": " + descriptions[e.Code] }

func (e *Error) Unwrap() error { return e.err }

// ErrorCode is the error's stable code (plan.CodeOf finds it).
func (e *Error) ErrorCode() string { return e.Code }

func fail(code string) *Error { return &Error{Code: code} }

func cancelled(cause error) *Error { return &Error{Code: CodeCancelled, err: cause} }

// CodeOf returns the code of a handler error, or "" (plan.CodeOf reads
// the code of any of the project's errors).
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Codes of Build problems (each a *plan.Error with the manifest path).
const (
	CodeUnknownHandler  = "unknown_handler"        // no such kind, or no such builtin id/version
	CodeInvalidConfig   = "invalid_handler_config" // the kind's config is malformed or has unknown fields
	CodeNotGranted      = "config_not_granted"     // the config does what the capability's grant does not allow
	CodeHandlerMismatch = "handler_mismatch"       // the capability's effect or playback does not suit the handler
	CodeHandlerConflict = "handler_conflict"       // one handler identity, capabilities with different grant sections
	CodeHandlerSetup    = "handler_setup_failed"   // a resource named by the config could not be prepared
)

func problem(code, path, message string) *plan.Error {
	return &plan.Error{Code: code, Path: path, Message: message}
}
