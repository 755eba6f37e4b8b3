package pattern

import (
	"fmt"
	"strconv"
)

// Token is `^[First][Rest]{0,Max-1}$` (Token) or `^[Rest]{Min,Max}$` (Run),
// over bytes: every class is ASCII, so a multi-byte character never
// matches, as it never does in the equivalent regular expression.
type Token struct {
	first, rest [256]bool
	min, max    int // bounds of the whole length
	source      string
}

// New is the token of one character of first and then up to max-1 of rest:
// `^[first][rest]{0,max-1}$`. first and rest are bracket-expression bodies
// of single ASCII characters and ranges ("a-z0-9_.-"; a '-' that is first
// or last is itself). It panics on a malformed class, like
// regexp.MustCompile, since classes are constants of the program.
func New(first, rest string, max int) *Token {
	t := &Token{min: 1, max: max,
		source: fmt.Sprintf("^[%s][%s]{0,%d}$", first, rest, max-1)}
	t.first = class(first)
	t.rest = class(rest)
	return t
}

// Run is the token of min to max characters of one class: `^[c]{min,max}$`.
func Run(c string, min, max int) *Token {
	t := &Token{min: min, max: max,
		source: "^[" + c + "]{" + strconv.Itoa(min) + "," + strconv.Itoa(max) + "}$"}
	t.rest = class(c)
	t.first = t.rest
	return t
}

// MatchString reports whether s is a whole token.
func (t *Token) MatchString(s string) bool {
	if len(s) < t.min || len(s) > t.max {
		return false
	}
	if s == "" {
		return true
	}
	if !t.first[s[0]] {
		return false
	}
	for i := 1; i < len(s); i++ {
		if !t.rest[s[i]] {
			return false
		}
	}
	return true
}

// String is the regular expression the token is equivalent to.
func (t *Token) String() string { return t.source }

// class is the table of a bracket-expression body.
func class(body string) (set [256]bool) {
	if body == "" {
		panic("pattern: empty class")
	}
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c >= 0x80 || c == '[' || c == ']' || c == '\\' || c == '^' && i == 0 {
			panic(fmt.Sprintf("pattern: unsupported character %q in class %q", c, body))
		}
		if i+2 < len(body) && body[i+1] == '-' {
			hi := body[i+2]
			if hi < c || hi >= 0x80 {
				panic(fmt.Sprintf("pattern: bad range %c-%c in class %q", c, hi, body))
			}
			for b := int(c); b <= int(hi); b++ {
				set[b] = true
			}
			i += 2
			continue
		}
		set[c] = true
	}
	return set
}
