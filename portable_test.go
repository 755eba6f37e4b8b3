package apysup_test

import (
	"os"
	"os/exec"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

// portablePackages build on every OS Go supports with CGO_ENABLED=0: the
// library, the wazero backend, Plan sealing and receipt verification. The
// native backend builds off Linux only as its refusal
// (native_unsupported_os); seccomp and cmd/apysup are Linux's.
var portablePackages = []string{
	"./", "./plan/...", "./broker/...", "./python/...", "./internal/canonjson/", "./internal/spin/", "./internal/testenv/",
	"./internal/rpc/", "./internal/sandbox/...",
}

// The portable packages build and vet for macOS on Apple silicon, tests
// included: a Linux-only call in one of them fails here, with the
// compiler's words, rather than on a user's Mac.
func TestPortablePackagesBuildForDarwin(t *testing.T) {
	if testing.Short() {
		t.Skip("cross-compiles the standard library on a cold cache")
	}
	goTool, err := exec.LookPath("go")
	testenv.Need(t, err == nil, "the go tool, to cross-build the portable packages")
	root := testenv.CheckoutRoot(t)
	for _, verb := range []string{"build", "vet"} {
		cmd := exec.Command(goTool, append([]string{verb}, portablePackages...)...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOOS=darwin GOARCH=arm64 CGO_ENABLED=0 go %s %v: %v\n%s", verb, portablePackages, err, out)
		}
	}
}
