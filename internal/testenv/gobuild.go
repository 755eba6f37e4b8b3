package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
)

// ModulePath is this repository's module.
const ModulePath = "github.com/apysup/apysup"

// CheckoutRoot returns the directory of this checkout's go.mod, found from
// the test's working directory upwards.
func CheckoutRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(b, []byte("module "+ModulePath+"\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatalf("no go.mod of %s above the working directory", ModulePath)
		}
		dir = parent
	}
}

// HasPatch checks that third_party/dir holds apysup's patch for the version
// of module that go.mod requires (mk/module-patch.sh applies it).
func HasPatch(t testing.TB, module, dir string) {
	t.Helper()
	root := CheckoutRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(module) + ` (v\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatalf("go.mod does not require %s", module)
	}
	if _, err := os.Stat(filepath.Join(root, "third_party", dir, string(m[1])+".patch")); err != nil {
		t.Fatalf("no patch for the %s go.mod requires: %v", module, err)
	}
}

// BuildProgram builds main.go (the source given) as a module of its own
// that requires this checkout through a replace directive, as a program
// outside the repository would, and returns the binary. It works offline:
// the requirements are this checkout's, already in the module cache.
func BuildProgram(t testing.TB, mainGo string, buildArgs ...string) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	Need(t, err == nil, "the go tool, to build a program against this checkout")
	root := CheckoutRoot(t)
	mod, err := os.ReadFile(filepath.Join(root, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	// The checkout's own requirements, so that nothing needs the network.
	requires := mod[bytes.Index(mod, []byte("\nrequire"))+1:]
	dir := t.TempDir()
	goMod := "module example.com/program\n\ngo 1.26\n\nrequire " + ModulePath + " v0.0.0\n\nreplace " +
		ModulePath + " => " + root + "\n\n" + string(requires)
	for name, content := range map[string]string{"go.mod": goMod, "go.sum": string(sum), "main.go": mainGo} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "program")
	cmd := exec.Command(goTool, append(append([]string{"build", "-mod=mod", "-o", bin}, buildArgs...), ".")...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}
