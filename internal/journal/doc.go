// Package journal is the supervisor's durable memory of runs and calls
// (docs/spec.md section 10, issue 15): what a run under an idempotency key
// did, call by call, so that after a crash every call id can be answered
// as completed (with its recorded response and receipt), absent (provably
// never dispatched) or unknown (dispatch began, no outcome was recorded),
// and nothing is ever dispatched twice.
//
// The journal is one SQLite database in WAL mode with synchronous=FULL, in
// a state directory, beside an epoch file:
//
//   - log: an append-only hash chain of entries (domain apysup.journal.v1),
//     one per boundary (run_begun, call_intent, approval_awaited,
//     approval_decided, dispatch_begun, call_completed, run_ended,
//     compacted). Bodies hold ids, digests and codes; the bulky payloads
//     (a call's broker response and receipt, a run's RunResult, the effect
//     binding a call was dispatched with and a provider's decision
//     projection) live in the state tables beside the digests the log
//     binds.
//   - runs, calls: the state a replay of the log gives, kept in the same
//     transaction as each log entry, so a lookup is one indexed read.
//   - journal.epoch (outside the database): the journal's id and the
//     sequence number and digest of the last committed entry, rewritten
//     after every commit. A database older than its epoch file (a restored
//     copy) is refused: the journal stays unavailable rather than forget
//     effects.
//
// Every boundary is durable before the step it guards: an intent before
// admission goes on, dispatch_begun before the handler runs, and a
// completion before the response is returned. The journal never holds
// grant policies or credentials; a call's arguments appear only inside
// the digests that the receipt already carries.
package journal
