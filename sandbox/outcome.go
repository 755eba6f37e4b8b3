package sandbox

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// Bounds of the out directory (GuestOutDir), the same on both backends: the
// runner's outcome.json, its temporary copy, and little else.
const (
	MaxGuestOutcome = 2 << 20                   // outcome.json read back by the host
	OutDirBytes     = 2*MaxGuestOutcome + 1<<20 // bytes the guest may keep in GuestOutDir
	OutDirFiles     = 64                        // entries the guest may keep there
)

// ReadOutcomeFile reads the runner's outcome file for both backends. The
// guest owns the out directory: whatever it left at path (a directory, a
// symlink, a FIFO, an empty or a huge file) is evidence about the guest,
// never a host failure. Anything but a non-empty regular file of at most
// MaxGuestOutcome bytes is no outcome; tooLarge reports a regular file
// over the bound.
func ReadOutcomeFile(path string) (data []byte, tooLarge bool) {
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxGuestOutcome+1))
	if err != nil || len(b) == 0 {
		return nil, false
	}
	if len(b) > MaxGuestOutcome {
		return nil, true
	}
	return b, false
}
