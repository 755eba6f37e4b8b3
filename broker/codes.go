package broker

// Stable error codes in broker responses and receipts.
const (
	CodeFrameEmpty            = "frame_empty"
	CodeFrameTooLarge         = "frame_too_large"
	CodeFrameMalformed        = "frame_malformed"
	CodeArgumentsNotObject    = "arguments_not_object"
	CodeInvalidCallID         = "invalid_call_id"
	CodeSurfaceForbidsDirect  = "surface_forbids_direct"
	CodeSurfaceForbidsProgram = "surface_forbids_program"
	CodeProgramSequence       = "program_sequence_violation"
	CodeCallIDReused          = "call_id_reused"
	CodeMaxCallsExhausted     = "max_calls_exhausted"
	CodeUnknownCapability     = "unknown_capability"
	CodeStreamingForbidsWrite = "streaming_forbids_workspace_write"
	CodeInputSchema           = "input_schema_violation"
	CodeGrantDenied           = "grant_denied"
	CodeApprovalUnavailable   = "approval_unavailable"
	CodeApprovalAuditFull     = "approval_audit_full"
	CodeApprovalRejected      = "approval_rejected"
	CodeApprovalExpired       = "approval_expired"
	CodeApprovalCancelled     = "approval_cancelled"
	CodeApprovalAuditFailed   = "approval_audit_failed"
	CodeApprovalRecordInvalid = "approval_record_invalid"
	CodeCallCancelled         = "call_cancelled"
	CodeHandlerError          = "handler_error"
	CodeHandlerPanicked       = "handler_panicked"
	CodeResultTooLarge        = "result_too_large"
	CodeResultMalformed       = "result_malformed"
	CodeOutputSchema          = "output_schema_violation"
	CodeEvidenceMissing       = "evidence_missing"
	CodeEvidenceInvalid       = "evidence_invalid"
	CodeRunClosed             = "run_closed"
	CodeCallIdentityMismatch  = "call_identity_mismatch"
	CodeDispatchUnknown       = "dispatch_outcome_unknown"

	// Provider effect acceptance (acceptance.go, docs/acceptance.md).
	CodeProviderRejected             = "provider_rejected"
	CodeProviderConflict             = "provider_conflict"
	CodeProviderPresentationRejected = "provider_presentation_rejected"
	CodeProviderEpochRejected        = "provider_epoch_rejected"
	CodeProviderAnswerInvalid        = "provider_answer_invalid"
	CodeProviderResultCompacted      = "provider_result_compacted"
)

// messages are fixed texts: a response never echoes guest input, grants or
// handler internals. grant_denied alone says more (grant.go): which
// argument the grant refused, by a path of names the host declared, or
// that the grant's call budget is spent; never the policy.
var messages = map[string]string{
	CodeFrameEmpty:            "the call frame is empty",
	CodeFrameTooLarge:         "the call frame is larger than 1 MiB",
	CodeFrameMalformed:        "the call frame is not strict JSON of the form {call_id, capability, arguments}",
	CodeArgumentsNotObject:    "arguments must be a JSON object",
	CodeInvalidCallID:         "the call id is neither capability-<n> nor <parent>:program:<n>",
	CodeSurfaceForbidsDirect:  "this run's surface does not admit direct calls",
	CodeSurfaceForbidsProgram: "this run's surface does not admit programmatic calls for this parent",
	CodeProgramSequence:       "a programmatic call id must be the parent's next sequence number",
	CodeCallIDReused:          "the call id was already used in this run",
	CodeMaxCallsExhausted:     "the plan's max_calls is exhausted",
	CodeUnknownCapability:     "no such capability in the plan",
	CodeStreamingForbidsWrite: "streaming calls may not use workspace_write capabilities",
	CodeInputSchema:           "the arguments do not match the capability's input schema",
	CodeGrantDenied:           "the capability's grant does not allow this call",
	CodeApprovalUnavailable:   "the capability needs approval and this run has no approver",
	CodeApprovalAuditFull:     "the approval audit is full; no new approval requests are accepted",
	CodeApprovalRejected:      "the approver rejected the call",
	CodeApprovalExpired:       "the approval lease expired before dispatch",
	CodeApprovalCancelled:     "the approval request was cancelled before dispatch",
	CodeApprovalAuditFailed:   "the handler ran but its approval audit could not be completed; the outcome is ambiguous",
	CodeApprovalRecordInvalid: "the host could not bind an approval record to this call; the handler did not run",
	CodeCallCancelled:         "the call was cancelled before dispatch; the handler did not run",
	CodeHandlerError:          "the handler reported an error",
	CodeHandlerPanicked:       "the handler failed unexpectedly; it may have acted",
	CodeResultTooLarge:        "the handler result is larger than 1 MiB",
	CodeResultMalformed:       "the handler result is not strict JSON",
	CodeOutputSchema:          "the handler result does not match the capability's output schema",
	CodeEvidenceMissing:       "a captured handler returned no transport evidence",
	CodeEvidenceInvalid:       "a captured handler returned malformed transport evidence",
	CodeRunClosed:             "the run is closed",
	CodeCallIdentityMismatch:  "an earlier attempt of this run recorded this call id with another request",
	CodeDispatchUnknown:       "an earlier attempt of this run began this call's dispatch and recorded no outcome; it may have acted and is not retried",
	CodeJournalUnavailable:    "the run's journal could not record the call; the handler did not run",

	CodeProviderRejected:             "the provider refused the call where it commits the effect (its policy, a revocation or the authorization's validity); nothing was applied",
	CodeProviderConflict:             "the provider holds this call's effect or authorization identity bound to other content; nothing was applied",
	CodeProviderPresentationRejected: "the provider refused the call's presentation before reserving anything; nothing was applied",
	CodeProviderEpochRejected:        "the provider retired the identity epoch this call was bound to; nothing was applied",
	CodeProviderAnswerInvalid:        "the provider answered with a decision the broker cannot use; it may have acted",
	CodeProviderResultCompacted:      "the provider decided this call earlier and keeps only its tombstone; the result is no longer available",
	CodeGrantNotRevocable:            "the capability's handler is no provider that can revoke a grant",
	CodeRevocationFailed:             "the provider did not record the revocation; nothing is revoked",
}

// Message returns the fixed text for a code.
func Message(code string) string { return messages[code] }
