package report

import (
	"regexp"
	"testing"
)

// goPrefix is what UserMessage removes, as the expression it replaced.
var goPrefix = regexp.MustCompile(`(?m)(^|: )(?:` + GoPackages + `): `)

func userMessageByExpression(s string) string {
	for {
		t := goPrefix.ReplaceAllString(s, "$1")
		if t == s {
			return s
		}
		s = t
	}
}

var userMessageSeeds = []string{
	"native: refused (invalid_job): script: open /x: no such file",
	"supervisor: native: create container: denied",
	"the run names plan sha256:1, the manifest seals to sha256:2",
	"m.json:\nplan: max_calls: out of range\ncanonjson: json_syntax",
	": plan: x", "plan: ", "plan:x", "xplan: y", "a\n\nwasi: wazero: b: journal: c", "rpc: : rpc: : ",
}

// TestUserMessage: without the Go package names, at the start of a line
// or of a wrapped part only, as the regular expression removes them.
func TestUserMessage(t *testing.T) {
	for in, want := range map[string]string{
		userMessageSeeds[0]: "refused (invalid_job): script: open /x: no such file",
		userMessageSeeds[1]: "create container: denied",
		userMessageSeeds[2]: userMessageSeeds[2],
		userMessageSeeds[3]: "m.json:\nmax_calls: out of range\njson_syntax",
		"xplan: y":          "xplan: y",
	} {
		if got := UserMessage(in); got != want {
			t.Errorf("%q: %q, want %q", in, got, want)
		}
	}
	for _, in := range userMessageSeeds {
		if got, want := UserMessage(in), userMessageByExpression(in); got != want {
			t.Errorf("%q: %q, the expression %q", in, got, want)
		}
	}
}

// FuzzUserMessage: UserMessage and the expression agree on any text.
func FuzzUserMessage(f *testing.F) {
	for _, s := range userMessageSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := UserMessage(s), userMessageByExpression(s); got != want {
			t.Fatalf("%q: %q, the expression %q", s, got, want)
		}
	})
}
