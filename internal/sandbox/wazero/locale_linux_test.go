package wazero

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

// The WASI build's setlocale wrapper (python/wasi/_apysup_locale.c)
// answers as the native guest's glibc does where only the C locales
// exist: the wrapper and glibc's own setlocale, compiled natively into one
// program, get the same calls and must give the same names and refusals.
// glibc runs with LOCPATH an empty directory, so that it knows its
// built-in C locales only, as in a sandbox whose root holds no compiled
// locale, whatever the host has generated.
func TestLocaleWrapperAnswersAsGlibc(t *testing.T) {
	var cc string
	for _, name := range []string{"clang-19", "cc", "gcc"} { // clang-19 builds the WASI CPython (build.sh)
		if p, err := exec.LookPath(name); err == nil {
			cc = p
			break
		}
	}
	testenv.Need(t, cc != "", "a C compiler (clang-19, installed by make wasi-python)")
	root := testenv.CheckoutRoot(t)
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "locale_glibc")
	out, err := exec.Command(cc, "-O1", "-Wall", "-Werror", "-o", bin, "testdata/locale_glibc.c",
		filepath.Join(root, "python", "wasi", "_apysup_locale.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LOCPATH=" + tmp} // no locale directory; LOCPATH also keeps glibc off the locale archive
	out, err = cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var calls, differ int
	if _, serr := fmt.Sscanf(lines[len(lines)-1], "%d calls, %d differ", &calls, &differ); serr != nil || err != nil || differ != 0 || calls < 2400 {
		t.Fatalf("%v\n%s", err, out)
	}
}
