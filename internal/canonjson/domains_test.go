package canonjson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
)

// domainUsers are the only functions that may name each digest domain:
// one kind of document per domain. A new use of a domain is a new row
// here, decided on purpose (a guest chooses the bytes of its arguments,
// so a digest of them must never be able to pass for a digest of
// another kind of document).
var domainUsers = map[string][]string{
	"DomainGrant":            {"plan.NewGrant"},
	"DomainPlan":             {"plan.(*Plan).computeIdentity"},
	"DomainReceipt":          {"broker.(Receipt).computeID"},
	"DomainRequest":          {"broker.RequestDigest"},
	"DomainResponse":         {"broker.(*Broker).recordTranscript", "broker.(*Broker).finish"},
	"DomainArguments":        {"broker.(*Broker).awaitApproval", "broker.(*Broker).recordTranscript"},
	"DomainWorkspace":        {"sandbox.(*WorkspaceReceipt).Seal", "sandbox.(WorkspaceReceipt).Verify"},
	"DomainWorkspaceTree":    {"sandbox.(Tree).Digest"},
	"DomainWorkspaceRequest": {"supervisor.(*Supervisor).disposeWorkspace"},
	"DomainEvent":            {"broker.(Event).computeDigest"},
	"DomainJournal":          {"journal.entryDigest"},
	"DomainRunRequest":       {"supervisor.fingerprint"},
	"DomainEffect":           {"broker.(EffectBinding).Seal"},
	"DomainAuthorization":    {"broker.(EffectBinding).Seal"},
	"DomainEffectBinding":    {"broker.(EffectBinding).Seal"},
	"DomainKVCredential":     {"handlers.kvCredentialOf"},
	"DomainKVContext":        {"handlers.kvContext"},
	"DomainKVRef":            {"handlers.kvRef"},
	"DomainKVDecision":       {"handlers.(kvReceipt).digest"},
	"DomainKVOrder":          {"handlers.(kvOrderReceipt).digest"},
	"DomainKVAbsence":        {"handlers.(kvFoundDecision).queryResult"},
}

// TestDomainsOneKindEach: the domain table has one row per constant, no
// two rows share a domain, and outside this package each domain is named
// only by the functions of its kind.
func TestDomainsOneKindEach(t *testing.T) {
	seen := map[string]bool{}
	for _, d := range Domains {
		if seen[d.Domain] {
			t.Errorf("domain %s listed twice", d.Domain)
		}
		seen[d.Domain] = true
		if !regexp.MustCompile(`^apysup\.[a-z_]+\.v[0-9]+$`).MatchString(d.Domain) || d.Over == "" {
			t.Errorf("domain row %+v", d)
		}
	}
	if len(Domains) != len(domainUsers) {
		t.Errorf("Domains has %d rows, domainUsers %d", len(Domains), len(domainUsers))
	}

	used := map[string][]string{} // constant -> functions naming it
	root := filepath.Join("..", "..")
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || filepath.Base(filepath.Dir(path)) == "canonjson" {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			name := file.Name.Name + "." + funcName(fn)
			ast.Inspect(fn, func(n ast.Node) bool {
				if sel, ok := n.(*ast.SelectorExpr); ok {
					if pkg, ok := sel.X.(*ast.Ident); ok && pkg.Name == "canonjson" && strings.HasPrefix(sel.Sel.Name, "Domain") && sel.Sel.Name != "DomainKind" {
						used[sel.Sel.Name] = append(used[sel.Sel.Name], name)
					}
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for constant, allowed := range domainUsers {
		if len(allowed) > 0 && len(used[constant]) == 0 {
			t.Errorf("canonjson.%s: no use found (the scan is broken, or the table is stale)", constant)
		}
	}
	for constant, users := range used {
		allowed, known := domainUsers[constant]
		if !known {
			t.Errorf("canonjson.%s is used (%v) but not in the domain table", constant, users)
			continue
		}
		for _, u := range users {
			if !slices.Contains(allowed, u) {
				t.Errorf("%s names canonjson.%s, which belongs to %v: give its kind of document a domain of its own", u, constant, allowed)
			}
		}
	}
}

func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	star := ""
	if s, ok := recv.(*ast.StarExpr); ok {
		star, recv = "*", s.X
	}
	if g, ok := recv.(*ast.IndexExpr); ok {
		recv = g.X
	}
	id, _ := recv.(*ast.Ident)
	if id == nil {
		return fn.Name.Name
	}
	return "(" + star + id.Name + ")." + fn.Name.Name
}

// TestDomainsDocumented: docs/security.md lists exactly the domains of the
// table.
func TestDomainsDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "security.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented, table []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(apysup\\.[a-z_]+\\.v[0-9]+)` \\|").FindAllStringSubmatch(string(doc), -1) {
		documented = append(documented, m[1])
	}
	for _, d := range Domains {
		table = append(table, d.Domain)
	}
	sort.Strings(documented)
	sort.Strings(table)
	if !slices.Equal(documented, table) {
		t.Errorf("docs/security.md lists %v, the code %v", documented, table)
	}
}
