package canonjson

import (
	"bytes"
	"unicode/utf8"
)

// maxExactDigits is how many decimal digits an integer literal may have
// and still be its own RFC 8785 form: every integer below 10^15 is an
// IEEE-754 double exactly, and ECMAScript writes such a double as its
// digits.
const maxExactDigits = 15

// alreadyCanonical reports whether data, a document Validate accepted, is
// its own RFC 8785 form. The test is conservative: it says yes only for
// documents made of what it can judge without transforming them, and no
// to anything else, which Canonical then transforms. Yes needs
//
//   - valid UTF-8 and no whitespace between tokens;
//   - strings without a backslash (RFC 8785 escapes only '"', '\\' and
//     control characters, which valid JSON cannot hold raw, so such a
//     string is written as it is);
//   - integers of at most 15 digits, without "-0";
//   - each object's keys in strictly ascending byte order, and no key
//     holding a byte from 0xEE up (a character from U+E000 up): below
//     that, UTF-8's byte order is UTF-16's code-unit order, RFC 8785's.
//
// A document a guest or a handler wrote canonically (arguments from the
// guest's wire, an echoed result) is then not parsed and written again on
// the call path: the transform costs more than the rest of admission's
// checks together. FuzzAlreadyCanonical holds this to the transform.
func alreadyCanonical(data []byte) bool {
	c := canonCheck{data: data}
	return utf8.Valid(data) && c.value() && c.pos == len(data)
}

type canonCheck struct {
	data  []byte
	pos   int
	depth int // of the containers open, at most MaxDepth
}

func (c *canonCheck) peek() byte {
	if c.pos < len(c.data) {
		return c.data[c.pos]
	}
	return 0
}

func (c *canonCheck) value() bool {
	switch b := c.peek(); {
	case b == '{':
		return c.object()
	case b == '[':
		return c.array()
	case b == '"':
		_, ok := c.str()
		return ok
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case b == '-' || b >= '0' && b <= '9':
		return c.integer()
	}
	return false
}

func (c *canonCheck) literal(word string) bool {
	if !bytes.HasPrefix(c.data[c.pos:], []byte(word)) {
		return false
	}
	c.pos += len(word)
	return true
}

func (c *canonCheck) object() bool {
	if c.depth++; c.depth > MaxDepth {
		return false
	}
	c.pos++ // '{'
	if c.peek() == '}' {
		c.pos++
		c.depth--
		return true
	}
	var prev []byte
	for i := 0; ; i++ {
		key, ok := c.str()
		if !ok || (i > 0 && bytes.Compare(prev, key) >= 0) {
			return false
		}
		for _, b := range key {
			if b >= 0xEE {
				return false
			}
		}
		prev = key
		if c.peek() != ':' {
			return false
		}
		c.pos++
		if !c.value() {
			return false
		}
		switch c.peek() {
		case ',':
			c.pos++
		case '}':
			c.pos++
			c.depth--
			return true
		default:
			return false
		}
	}
}

func (c *canonCheck) array() bool {
	if c.depth++; c.depth > MaxDepth {
		return false
	}
	c.pos++ // '['
	if c.peek() == ']' {
		c.pos++
		c.depth--
		return true
	}
	for {
		if !c.value() {
			return false
		}
		switch c.peek() {
		case ',':
			c.pos++
		case ']':
			c.pos++
			c.depth--
			return true
		default:
			return false
		}
	}
}

// str reads a string without escapes or control characters and returns
// its contents.
func (c *canonCheck) str() ([]byte, bool) {
	if c.peek() != '"' {
		return nil, false
	}
	start := c.pos + 1
	for i := start; i < len(c.data); i++ {
		switch b := c.data[i]; {
		case b == '"':
			c.pos = i + 1
			return c.data[start:i], true
		case b == '\\' || b < 0x20:
			return nil, false
		}
	}
	return nil, false
}

func (c *canonCheck) integer() bool {
	negative := c.peek() == '-'
	if negative {
		c.pos++
	}
	start := c.pos
	for c.pos < len(c.data) && c.data[c.pos] >= '0' && c.data[c.pos] <= '9' {
		c.pos++
	}
	digits := c.data[start:c.pos]
	switch {
	case len(digits) == 0 || len(digits) > maxExactDigits:
		return false
	case digits[0] == '0' && (len(digits) > 1 || negative): // "-0" is "0"
		return false
	}
	b := c.peek()
	return b != '.' && b != 'e' && b != 'E'
}
