package wazero

import (
	"fmt"
	"os"
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
// The host's root, like the sandbox's, must hold no compiled locale.
func TestLocaleWrapperAnswersAsGlibc(t *testing.T) {
	var cc string
	for _, name := range []string{"clang-16", "cc", "gcc"} { // clang-16 builds the WASI CPython (build.sh)
		if p, err := exec.LookPath(name); err == nil {
			cc = p
			break
		}
	}
	testenv.Need(t, cc != "", "a C compiler (clang-16, installed by make wasi-python)")
	if _, err := os.Stat("/usr/lib/locale/locale-archive"); err == nil {
		t.Skip("the host has compiled locales (/usr/lib/locale/locale-archive): glibc accepts more names than the sandbox's root offers")
	}
	root := testenv.CheckoutRoot(t)
	bin := filepath.Join(t.TempDir(), "locale_glibc")
	out, err := exec.Command(cc, "-O1", "-Wall", "-Werror", "-o", bin, "testdata/locale_glibc.c",
		filepath.Join(root, "python", "wasi", "_apysup_locale.c")).CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", cc, err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	out, err = cmd.CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	var calls, differ int
	if _, serr := fmt.Sscanf(lines[len(lines)-1], "%d calls, %d differ", &calls, &differ); serr != nil || err != nil || differ != 0 || calls < 700 {
		t.Fatalf("%v\n%s", err, out)
	}
}
