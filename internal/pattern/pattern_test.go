package pattern

import (
	"regexp"
	"testing"
)

// classes are the tokens the project checks (plan, broker, handlers,
// journal), each with the regular expression it replaced.
var tokens = []struct {
	token *Token
	regex string
}{
	{New("A-Za-z0-9", "A-Za-z0-9_.-", 128), `^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$`},
	{New("a-z", "a-z0-9_", 32), `^[a-z][a-z0-9_]{0,31}$`},
	{New("a-z", "a-z0-9_.-", 64), `^[a-z][a-z0-9_.-]{0,63}$`},
	{New("A-Za-z", "A-Za-z0-9_", 64), `^[A-Za-z][A-Za-z0-9_]{0,63}$`},
	{New("a-z", "a-z0-9_", 64), `^[a-z][a-z0-9_]{0,63}$`},
	{New("a-z_", "a-z0-9_", 64), `^[a-z_][a-z0-9_]{0,63}$`},
	{New("a-z0-9", "a-z0-9_.-", 64), `^[a-z0-9][a-z0-9_.-]{0,63}$`},
	{New("A-Za-z_", "A-Za-z0-9_", 128), `^[A-Za-z_][A-Za-z0-9_]{0,127}$`},
	{New("A-Za-z0-9", "A-Za-z0-9._:-", 128), `^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$`},
	{New("A-Za-z0-9", "A-Za-z0-9._:-", 192), `^[A-Za-z0-9][A-Za-z0-9._:-]{0,191}$`},
	{Run("a-zA-Z0-9_-", 1, 64), `^[a-zA-Z0-9_-]{1,64}$`},
	{Run("A-Za-z0-9!#$%&'*+.^_`|~-", 1, 64), "^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$"},
}

func TestTokenIsItsRegex(t *testing.T) {
	for _, tc := range tokens {
		if got := tc.token.String(); got != tc.regex {
			t.Errorf("String() = %s, want %s", got, tc.regex)
		}
	}
}

// seeds are strings at every edge: empty, each bound, each class edge,
// a multi-byte character, NUL, a newline ($ must not match before it).
var seeds = []string{
	"", "a", "A", "0", "_", "-", ".", ":", "a-", "-a", "a.b", "a:b", "aZ9_.-:",
	"\n", "a\n", "é", "aé", "a\x00", " a", "a ", "!", "a!#$%&'*+.^_`|~-",
	"[", "]", "\\", "^", "a^", "z{", "@", "`", "Z[", "9:", "/",
}

func lengths() []string {
	var out []string
	for _, n := range []int{31, 32, 33, 63, 64, 65, 127, 128, 129, 191, 192, 193} {
		b := make([]byte, n)
		for i := range b {
			b[i] = 'a'
		}
		out = append(out, string(b))
	}
	return out
}

func TestTokenMatchesLikeRegex(t *testing.T) {
	inputs := append(append([]string{}, seeds...), lengths()...)
	for c := 0; c < 256; c++ {
		inputs = append(inputs, string([]byte{byte(c)}), "a"+string([]byte{byte(c)}))
	}
	for _, tc := range tokens {
		re := regexp.MustCompile(tc.regex)
		for _, s := range inputs {
			if got, want := tc.token.MatchString(s), re.MatchString(s); got != want {
				t.Errorf("%s on %q: %v, regexp says %v", tc.regex, s, got, want)
			}
		}
	}
}

func FuzzTokenMatchesLikeRegex(f *testing.F) {
	for _, s := range append(seeds, lengths()...) {
		f.Add(s)
	}
	res := make([]*regexp.Regexp, len(tokens))
	for i, tc := range tokens {
		res[i] = regexp.MustCompile(tc.regex)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for i, tc := range tokens {
			if got, want := tc.token.MatchString(s), res[i].MatchString(s); got != want {
				t.Fatalf("%s on %q: %v, regexp says %v", tc.regex, s, got, want)
			}
		}
	})
}

func TestMalformedClassPanics(t *testing.T) {
	for _, body := range []string{"", "z-a", "a-é", "[a]", `\d`, "^a"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("class %q: no panic", body)
				}
			}()
			New(body, "a", 2)
		}()
	}
}

func BenchmarkBuildTokens(b *testing.B) {
	for b.Loop() {
		New("A-Za-z0-9", "A-Za-z0-9._:-", 192)
	}
}

func BenchmarkCompileRegex(b *testing.B) {
	for b.Loop() {
		regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:-]{0,191}$`)
	}
}
