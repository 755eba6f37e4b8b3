// Package python embeds the guest-side Python that every apysup run
// executes: the runtime module scripts import, the native bridge to the
// capability channel, the response decoder shared with the WASI build, and
// the runner that executes a script and writes its outcome.
//
// It only embeds files. It must never execute Python, hold policy, or make
// decisions the host makes; the guest files grant nothing by themselves.
// The WASI CPython build lives in python/wasi and has its own owner.
package python
