package apysup_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/apysup/apysup"

// layers is ARCHITECTURE.md's import rule: imports point one way, from a
// higher layer to a lower one (or within one component, e.g. internal/sandbox/native
// to sandbox). python only embeds files: anyone may import it, it imports
// nothing of the project's.
var layers = map[string]int{
	"canonjson": 0, "testenv": 0, "python": 0, "pattern": 0, "spin": 0, "callctx": 0,
	"acceptance": 3, // the provider conformance suite (tests of broker.Provider)
	"plan":       1,
	"broker":     2,
	"rpc":        3,
	"journal":    3, // the supervisor's durable memory; verifies receipts (broker)
	"seccomp":    3, // used by sandbox only (below)
	"sandbox":    4,
	"serve":      5, // the run service and its client (internal/serve)
	"":           6, // the root package
	"cmd":        6,
}

// TestImportRules: every import between the project's packages follows
// ARCHITECTURE.md (checked on the real import graph, test files excluded).
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "seccomp", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	component := func(pkg string) string {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg, module), "/")
		rel = strings.TrimPrefix(rel, "internal/") // a component's place, public or not, is not its layer
		top, _, _ := strings.Cut(rel, "/")
		return top
	}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := component(fields[0])
		if from == "integration" {
			continue // tests only
		}
		fromLayer, ok := layers[from]
		if !ok {
			t.Errorf("%s: a package outside ARCHITECTURE.md's layers", fields[0])
			continue
		}
		for _, imp := range fields[1:] {
			if imp != module && !strings.HasPrefix(imp, module+"/") {
				continue
			}
			to := component(imp)
			checked++
			switch {
			case from == "python" && to != "python":
				t.Errorf("%s imports %s: python only embeds files", fields[0], imp)
			case to == "seccomp" && from != "sandbox" && from != "seccomp":
				t.Errorf("%s imports %s: seccomp is used by sandbox only", fields[0], imp)
			case to == from:
			case layers[to] >= fromLayer:
				t.Errorf("%s imports %s: imports point one way (%s is not below %s)", fields[0], imp, to, from)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no project imports found: the check is broken")
	}
}

// publicPackages are the packages whose exported names are promises
// (RATIONALE.md, "What is public"). Everything else lives under internal/,
// cmd/ or integration/.
var publicPackages = map[string]bool{
	module: true, module + "/plan": true, module + "/broker": true,
	module + "/broker/handlers": true, module + "/python": true, module + "/python/wasi": true,
}

// TestPublicSurface: no package outside internal/ is public by accident, and
// nothing that runs a guest without confinement is importable from outside.
func TestPublicSurface(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "seccomp", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := map[string]bool{}
	for _, pkg := range strings.Fields(string(out)) {
		rel := strings.TrimPrefix(pkg, module+"/")
		switch {
		case strings.HasPrefix(rel, "internal/"), strings.HasPrefix(rel, "cmd/"), strings.HasPrefix(rel, "integration"):
		case publicPackages[pkg]:
			seen[pkg] = true
		default:
			t.Errorf("%s is public but not in publicPackages: move it under internal/ or decide to promise it", pkg)
		}
	}
	for pkg := range publicPackages {
		if !seen[pkg] {
			t.Errorf("%s is listed as public but does not exist", pkg)
		}
	}
	doc, err := exec.Command("go", "list", "-tags", "seccomp", "-f", "{{.Dir}}", "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dir := range strings.Fields(string(doc)) {
		if strings.Contains(dir, "/internal/") || strings.Contains(dir, "/cmd/") || strings.Contains(dir, "/integration") {
			continue
		}
		out, err := exec.Command("go", "doc", "-short", dir).Output()
		if err == nil && strings.Contains(string(out), "Unsandboxed") {
			t.Errorf("%s exports a way to run a guest without confinement", dir)
		}
	}
}

// TestWazeroChildInitsEarly: a wazero child process becomes one in
// internal/sandbox/wazero's init function, and Go initialises every
// package that one depends on first. Its dependencies stay clear of the
// Broker and what the Broker pulls in (the JSON Schema compiler's init
// alone is 8 ms of every child's start; `GODEBUG=inittrace=1 apysup
// --version`), so that the child's entry runs before those inits.
func TestWazeroChildInitsEarly(t *testing.T) {
	out, err := exec.Command("go", "list", "-tags", "seccomp", "-deps", "./internal/sandbox/wazero").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		for _, heavy := range []string{module + "/broker", module + "/plan", module + "/internal/rpc",
			"github.com/santhosh-tekuri/jsonschema", "golang.org/x/text", "github.com/prometheus", "modernc.org/"} {
			if dep == heavy || strings.HasPrefix(dep, heavy+"/") || strings.HasSuffix(heavy, "/") && strings.HasPrefix(dep, heavy) {
				t.Errorf("internal/sandbox/wazero depends on %s", dep)
			}
		}
	}
}
