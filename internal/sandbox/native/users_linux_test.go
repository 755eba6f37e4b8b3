package native

import (
	"fmt"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// The WASI build's pwd and grp modules (python/wasi/stdlib) answer with
// the users and groups of the native guest's generated /etc: the two
// backends must name the same owners.
func TestUserDatabasesAsNative(t *testing.T) {
	for _, tc := range []struct {
		module, etc string
		entry       *regexp.Regexp
		line        func(m []string) string
	}{
		{"pwd", "passwd", regexp.MustCompile(`(?m)^    \("([^"]*)", "([^"]*)", (\d+), (\d+), "([^"]*)", "([^"]*)", "([^"]*)"\),$`),
			func(m []string) string { return strings.Join(m[1:], ":") }},
		{"grp", "group", regexp.MustCompile(`(?m)^    \("([^"]*)", "([^"]*)", (\d+), \(\)\),$`),
			func(m []string) string { return strings.Join(m[1:], ":") + ":" }},
	} {
		src, err := os.ReadFile("../../../python/wasi/stdlib/" + tc.module + ".py")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, m := range tc.entry.FindAllStringSubmatch(string(src), -1) {
			fmt.Fprintln(&b, tc.line(m))
		}
		if got, want := b.String(), sandbox.EtcFiles()[tc.etc]; got != want {
			t.Errorf("the WASI build's %s answers\n%s\nthe native guest's /etc/%s is\n%s", tc.module, got, tc.etc, want)
		}
	}
}
