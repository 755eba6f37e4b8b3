package sandbox

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/python"
)

// Bounds of the out directory (GuestOutDir), the same on both backends: the
// runner's outcome.json, its temporary copy, and little else.
const (
	// MaxGuestOutcome bounds outcome.json, read and parsed (the one
	// bound, python.MaxOutcomeBytes).
	MaxGuestOutcome = python.MaxOutcomeBytes
	OutDirBytes     = 5 << 20 // bytes the guest may keep in GuestOutDir (two outcomes, with room)
	OutDirFiles     = 64      // entries the guest may keep there
)

// ReadOutcomeFile reads the runner's outcome file for both backends. The
// guest owns the out directory: whatever it left at path (a directory, a
// symlink, a FIFO, an empty or a huge file) is evidence about the guest,
// never a host failure. Anything but a non-empty regular file of at most
// MaxGuestOutcome bytes is no outcome; tooLarge reports a regular file
// over the bound.
func ReadOutcomeFile(path string) (data []byte, tooLarge bool) {
	return ReadGuestFile(path, MaxGuestOutcome)
}

// ReadGuestFile reads a file of a directory the guest writes (its out
// directory): a non-empty regular file of at most max bytes, not followed
// through a link, never blocking on a FIFO; nil for anything else, with
// tooLarge for a regular file over max. The native runner's report of its
// end is read the same way (native.endWatch).
func ReadGuestFile(path string, max int) (data []byte, tooLarge bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(max)+1))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	if len(b) > max {
		return nil, true
	}
	return b, false
}

// GuestOutcome is the runner's outcome.json.
type GuestOutcome struct {
	ExitCode  int             `json:"exit_code"`
	ResultSet bool            `json:"result_set"`
	Result    json.RawMessage `json:"result,omitempty"`
	Error     *GuestError     `json:"error,omitempty"`
	// Signal is set by the runner acting as init (native) when the script
	// was killed by a signal; ExitCode is then 128+Signal.
	Signal int `json:"signal,omitempty"`
}

// GuestError is an uncaught exception as the runner reports it.
type GuestError struct {
	Type      string `json:"type"`
	Message   string `json:"message"`
	Traceback string `json:"traceback"`
}

// ParseOutcome is the one parser of outcome.json, for both backends. It
// is guest output: at most MaxGuestOutcome bytes, strict (no duplicate
// keys, no unknown fields), and result_set agrees with result.
func ParseOutcome(raw []byte) (*GuestOutcome, error) {
	var o GuestOutcome
	if err := canonjson.DecodeStrict(raw, MaxGuestOutcome, &o); err != nil {
		return nil, fmt.Errorf("outcome: %w", err)
	}
	if o.ResultSet != (o.Result != nil) {
		return nil, fmt.Errorf("outcome: result_set disagrees with result")
	}
	return &o, nil
}

// KilledBySignalCode is the ErrorCode of a guest that died of sig, as both
// backends name it: killed_by_signal:SIGNAME.
func KilledBySignalCode(sig syscall.Signal) string {
	return CodeKilledBySignal + ":" + signalName(sig)
}

// glibc's first and last real-time signals: 32 and 33 are its threads'.
const sigRTMin, sigRTMax = 34, 64

// signalName is the name `kill -l` gives sig: SIGTERM; SIGRTMIN,
// SIGRTMIN+1 to SIGRTMIN+15, SIGRTMAX-14 to SIGRTMAX-1, SIGRTMAX for
// glibc's real-time signals, which x/sys names none of; SIG32 for a number
// with no name.
func signalName(sig syscall.Signal) string {
	if name := unix.SignalName(sig); name != "" {
		return name
	}
	switch n := int(sig); {
	case n == sigRTMin:
		return "SIGRTMIN"
	case n > sigRTMin && n <= sigRTMin+15:
		return fmt.Sprintf("SIGRTMIN+%d", n-sigRTMin)
	case n > sigRTMin+15 && n < sigRTMax:
		return fmt.Sprintf("SIGRTMAX-%d", sigRTMax-n)
	case n == sigRTMax:
		return "SIGRTMAX"
	default:
		return fmt.Sprintf("SIG%d", n)
	}
}
