package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestReadOutcomeFile: whatever the guest leaves where the outcome belongs
// is no outcome (or too large), never an error of the host's.
func TestReadOutcomeFile(t *testing.T) {
	cases := map[string]struct {
		make     func(t *testing.T, path string)
		want     []byte
		tooLarge bool
	}{
		"regular": {make: func(t *testing.T, p string) { write(t, p, []byte(`{"exit_code":0}`)) }, want: []byte(`{"exit_code":0}`)},
		"absent":  {make: func(*testing.T, string) {}},
		"empty":   {make: func(t *testing.T, p string) { write(t, p, nil) }},
		"huge":    {make: func(t *testing.T, p string) { write(t, p, bytes.Repeat([]byte("x"), MaxGuestOutcome+1)) }, tooLarge: true},
		"dir":     {make: func(t *testing.T, p string) { mustDo(t, os.Mkdir(p, 0o755)) }},
		"fifo":    {make: func(t *testing.T, p string) { mustDo(t, syscall.Mkfifo(p, 0o644)) }},
		"symlink": {make: func(t *testing.T, p string) {
			target := filepath.Join(filepath.Dir(p), "elsewhere")
			write(t, target, []byte(`{"exit_code":0}`))
			mustDo(t, os.Symlink(target, p))
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), OutcomeFile)
			tc.make(t, path)
			got, tooLarge := ReadOutcomeFile(path)
			if !bytes.Equal(got, tc.want) || tooLarge != tc.tooLarge {
				t.Fatalf("got %q (too large %v), want %q (too large %v)", got, tooLarge, tc.want, tc.tooLarge)
			}
		})
	}
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	mustDo(t, os.WriteFile(path, data, 0o644))
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Both backends name a death by signal alike.
func TestKilledBySignalCode(t *testing.T) {
	for sig, want := range map[syscall.Signal]string{
		syscall.SIGTERM: "killed_by_signal:SIGTERM", syscall.SIGABRT: "killed_by_signal:SIGABRT", syscall.SIGKILL: "killed_by_signal:SIGKILL",
		// glibc's real-time signals, as `kill -l` names them, and the two
		// it keeps for its threads, which have no name.
		34: "killed_by_signal:SIGRTMIN", 35: "killed_by_signal:SIGRTMIN+1", 49: "killed_by_signal:SIGRTMIN+15",
		50: "killed_by_signal:SIGRTMAX-14", 63: "killed_by_signal:SIGRTMAX-1", 64: "killed_by_signal:SIGRTMAX",
		32: "killed_by_signal:SIG32", 33: "killed_by_signal:SIG33",
	} {
		if got := KilledBySignalCode(sig); got != want {
			t.Errorf("%d: %q, want %q", sig, got, want)
		}
	}
}
