package testenv

import (
	"fmt"
	"testing"
)

// recorder is a testing.TB that keeps what ExpectFiltered says.
type recorder struct {
	testing.TB
	errors, logs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(f string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(f, args...))
}
func (r *recorder) Logf(f string, args ...any) { r.logs = append(r.logs, fmt.Sprintf(f, args...)) }

func TestExpectFiltered(t *testing.T) {
	cases := []struct {
		unconfined, confined string
		ok, logged           bool
	}{
		{"ok:1234", "SIGSYS", true, false},   // reachable, filtered
		{"ok:1234", "ok:1", false, false},    // reachable, ran
		{"ok:1234", "SIGSEGV", false, false}, // reachable: only SIGSYS proves the filter
		{"ENOSYS", "SIGSYS", true, false},    // the entry ran (x32 off): the filter sees it first
		{"ENOSYS", "ENOSYS", false, false},   // ... so ENOSYS means the filter let it through
		{"EPERM", "EPERM", false, false},     //
		{"SIGSEGV", "SIGSEGV", true, true},   // undelivered entry: never ran
		{"SIGSEGV", "SIGSYS", true, true},    //
		{"SIGSEGV", "ok:0", false, false},    // ran although the host does not deliver it
		{"SIGSEGV", "ENOSYS", false, false},  //
		{"SIGSEGV", "SIGILL", false, false},  // some other death: not the same ending
	}
	for _, tc := range cases {
		r := &recorder{TB: t}
		ExpectFiltered(r, "call", tc.unconfined, tc.confined)
		if (len(r.errors) == 0) != tc.ok || (len(r.logs) > 0) != tc.logged {
			t.Errorf("unconfined %s, confined %s: errors %q logs %q", tc.unconfined, tc.confined, r.errors, r.logs)
		}
	}
}
