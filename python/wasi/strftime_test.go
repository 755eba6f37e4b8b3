package wasi

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

// TestStrftimeIsGlibcs: _apysup_strftime.c, the WASI build's wcsftime,
// formats as the native guest's C library does. Compiled for the host
// with testdata/strftime_check.c, it is compared with glibc's own
// wcsftime over every conversion character under glibc's flags, widths
// and modifiers and over random formats, in three zones and three buffer
// sizes. The guest side
// (the same file linked into python.wasm) is integration/parity's
// std_strftime.py.
func TestStrftimeIsGlibcs(t *testing.T) {
	cc, err := exec.LookPath("gcc")
	testenv.Need(t, err == nil, "gcc (make deps installs it)")
	bin := filepath.Join(t.TempDir(), "strftime_check")
	build := exec.Command(cc, "-std=gnu11", "-O1", "-Wall", "-Wextra", "-Werror", "-o", bin,
		"testdata/strftime_check.c", "_apysup_strftime.c")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(build.Args, " "), err, out)
	}
	out, err := exec.Command(bin).Output()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) > 20 {
		lines = append(lines[:20], "...", lines[len(lines)-1])
	}
	if err != nil {
		t.Fatalf("%v:\n%s", err, strings.Join(lines, "\n"))
	}
	summary := lines[len(lines)-1]
	if !strings.HasSuffix(summary, " checks, 0 differ") || strings.HasPrefix(summary, "0 ") {
		t.Fatalf("unexpected summary %q", summary)
	}
	t.Log(summary)
}
