package wazero

import (
	"os"
	"time"

	"github.com/apysup/apysup/internal/spin"
)

// A host call crosses the socketpair between a child and its parent twice,
// and each end polls for the other's bytes before it blocks (package spin):
//
//   - the child, for the answer, up to answerSpin: a Broker's answer to a
//     call that needs no human and no network comes in 20-40 us. The spin
//     runs on the guest's thread and is the guest's CPU time, as the
//     native bridge's own poll for the answer is the native guest's;
//   - the parent, for the next call, up to callSpin, while the guest's
//     calls come that close together (spin.Adaptive), and callPolls
//     windows in a run at most, as the native channel server
//     (rpc.requestPolls).
const (
	answerSpin = 200 * time.Microsecond
	callSpin   = 200 * time.Microsecond
	callPolls  = 4096
)

// spinReadable is spin.Readable on f.
func spinReadable(f *os.File, window time.Duration, yield func()) bool {
	rc, err := f.SyscallConn()
	return err == nil && spin.Readable(rc, window, yield)
}
