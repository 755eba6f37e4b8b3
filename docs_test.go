package apysup_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// sourceStrings walks the module's non-test Go files and returns every
// string constant whose name begins with Code, ErrorCode, Ledger or Domain (the
// project's error codes and digest domains), and the set of every string
// literal in them.
func sourceStrings(t *testing.T) (consts map[string]string, literals map[string]bool) {
	t.Helper()
	consts, literals = map[string]string{}, map[string]bool{}
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") && path != "." {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.BasicLit:
				if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING {
					literals[s] = true
				}
			case *ast.ValueSpec:
				for i, name := range n.Names {
					if i >= len(n.Values) {
						break
					}
					lit, ok := n.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					s, _ := strconv.Unquote(lit.Value)
					for _, prefix := range []string{"Code", "ErrorCode", "Domain", "Ledger"} {
						if strings.HasPrefix(name.Name, prefix) && name.Name != prefix {
							consts[path+":"+name.Name] = s
						}
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return consts, literals
}

// specSection returns the text of docs/spec.md's section titled title.
func specSection(t *testing.T, doc, title string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n## "+title+"\n")
	if !ok {
		t.Fatalf("docs/spec.md has no section %q", title)
	}
	section, _, _ := strings.Cut(rest, "\n## ")
	return section
}

// TestSpecNamesEveryCode keeps docs/spec.md true: every error code and
// digest domain the code defines is in its tables, and every code the
// tables list is one the code can return.
func TestSpecNamesEveryCode(t *testing.T) {
	b, err := os.ReadFile("docs/spec.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	codes := specSection(t, doc, "9. Error codes")
	encodings := specSection(t, doc, "3. Encodings")
	consts, literals := sourceStrings(t)
	if len(consts) < 100 {
		t.Fatalf("found only %d code and domain constants: the scan is broken", len(consts))
	}
	for where, value := range consts {
		section := codes
		if strings.Contains(where, ":Domain") {
			section = encodings
		}
		if value == "ok" { // doctor's "nothing wrong", not an error
			continue
		}
		if !strings.Contains(section, "`"+value+"`") {
			t.Errorf("%s = %q is not in docs/spec.md", where, value)
		}
	}
	listed := regexp.MustCompile("`([a-z][a-z0-9_]*)`").FindAllStringSubmatch(codes, -1)
	for _, m := range listed {
		if !literals[m[1]] {
			t.Errorf("docs/spec.md lists `%s`, which no Go source returns", m[1])
		}
	}
}
