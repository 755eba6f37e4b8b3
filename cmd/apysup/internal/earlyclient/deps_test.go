package earlyclient

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsStayEarly: the early client runs before the rest of the
// binary initialises only while it imports none of what initialises late
// (see the package doc); a new import of one of them would quietly make
// every `apysup run --server` pay the whole binary's start again.
func TestImportsStayEarly(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/apysup/apysup/cmd/apysup/internal/earlyclient": true,
		"github.com/apysup/apysup/cmd/apysup/internal/report":      true,
		"github.com/apysup/apysup/internal/serve/sse":              true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case strings.Contains(pkg, "."):
			if !allowed[pkg] {
				t.Errorf("imports %s: only the standard library, report and sse", pkg)
			}
		case pkg == "net" || strings.HasPrefix(pkg, "net/") || pkg == "regexp" || pkg == "path/filepath":
			t.Errorf("imports %s, which initialises after most of the binary", pkg)
		}
	}
}
