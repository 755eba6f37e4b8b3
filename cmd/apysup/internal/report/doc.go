// Package report is how `apysup run` shows a finished run: the summary,
// the exit status, the guest's streams on the user's terminal and the
// escaping that keeps guest text from driving it.
//
// It reads the RunResult as its JSON document (Result holds the fields the
// summary shows), so that a local run and a run on a server, whose result
// arrives as JSON, are shown by the same code. It imports nothing of the
// project's: `apysup run --server` prints through it from the client's
// early path (package early), before the rest of the binary initialises.
// It must never import a package that brings the plan, the broker or the
// JSON Schema library with it.
package report
