package canonjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Limits for JSON that crosses a trust boundary (SPEC.md section 3).
const (
	MaxGuestBytes = 1 << 20
	MaxDepth      = 64
)

// Stable error codes of the strict parser.
const (
	CodeEmpty        = "json_empty"
	CodeTooLarge     = "json_too_large"
	CodeInvalidUTF8  = "json_invalid_utf8"
	CodeSyntax       = "json_syntax"
	CodeDuplicateKey = "json_duplicate_key"
	CodeTooDeep      = "json_too_deep"
	CodeTrailingData = "json_trailing_data"
	CodeBadSurrogate = "json_invalid_surrogate"
	CodeBadNumber    = "json_number_out_of_range"
	CodeUnknownField = "json_unknown_field"
	CodeTypeMismatch = "json_type_mismatch"
	CodeNotObject    = "json_not_object"
)

// Error is a typed refusal of the strict parser. Code is stable; Detail is
// for the host's diagnostics and never echoes more than a byte offset.
type Error struct {
	Code   string
	Offset int
	Detail string
}

// ErrorCode is the error's stable code (the project's convention: every
// typed error has one; plan.CodeOf finds it).
func (e *Error) ErrorCode() string { return e.Code }

func (e *Error) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%s at byte %d: %s", e.Code, e.Offset, e.Detail)
	}
	return fmt.Sprintf("%s at byte %d", e.Code, e.Offset)
}

// CodeOf returns the stable code of a strict-parser error, or "" if err is
// not one.
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// Validate checks that data is exactly one JSON value that can be
// canonicalised: at most maxBytes, valid UTF-8, no lone surrogate escapes,
// no duplicate object keys at any depth (compared after unescaping), depth
// at most MaxDepth, every number a finite IEEE-754 double, nothing after
// the value but whitespace.
func Validate(data []byte, maxBytes int) error {
	s := scanner{data: data}
	return s.document(maxBytes)
}

// ValidateCarrier checks data as Validate does, for a document that
// carries another one `levels` containers down (the channel's envelope
// carries the call frame one level down): its containers may nest that
// many levels deeper than MaxDepth, so that the document carried is held
// to MaxDepth itself, as it is where it travels alone (the wazero host
// call).
func ValidateCarrier(data []byte, maxBytes, levels int) error {
	s := scanner{data: data, carrier: levels}
	return s.document(maxBytes)
}

// ParseStrict validates data and decodes it into Go values (maps, slices,
// strings, bools, nil and json.Number), in one pass: the values
// encoding/json's Decoder gives with UseNumber, for every document Validate
// accepts.
func ParseStrict(data []byte, maxBytes int) (any, error) {
	s := scanner{data: data, build: true}
	if err := s.document(maxBytes); err != nil {
		return nil, err
	}
	return s.v, nil
}

// Fields checks data as Validate does and, in the same pass, returns the
// bytes of the members of its top-level object named names, in that order
// (nil for one that is absent): the strict decoding of a flat frame,
// without reflection. A member of any other name is refused
// (CodeUnknownField), as DecodeStrict refuses it, and a document that is
// no object is CodeNotObject. The bytes are data's own.
func Fields(data []byte, maxBytes int, names ...string) ([][]byte, error) {
	out := make([][]byte, len(names))
	s := scanner{data: data, member: func(key string, value []byte) error {
		for i, name := range names {
			if name == key {
				out[i] = value
				return nil
			}
		}
		return unknownField(key)
	}}
	if err := s.document(maxBytes); err != nil {
		return nil, err
	}
	if bytes.TrimLeft(data, " \t\r\n")[0] != '{' {
		return nil, &Error{Code: CodeNotObject}
	}
	return out, nil
}

// String decodes raw, a JSON string literal and nothing else, as Validate
// would accept it; ok is false for anything else.
func String(raw []byte) (v string, ok bool) {
	if len(raw) == 0 || raw[0] != '"' || !utf8.Valid(raw) {
		return "", false
	}
	s := scanner{data: raw}
	v, err := s.str()
	return v, err == nil && s.pos == len(raw)
}

// document checks that s.data is exactly one JSON value Validate accepts.
func (s *scanner) document(maxBytes int) error {
	if len(bytes.TrimSpace(s.data)) == 0 {
		return &Error{Code: CodeEmpty}
	}
	if len(s.data) > maxBytes {
		return &Error{Code: CodeTooLarge, Detail: fmt.Sprintf("%d bytes > %d", len(s.data), maxBytes)}
	}
	if !utf8.Valid(s.data) {
		return &Error{Code: CodeInvalidUTF8}
	}
	s.skipSpace()
	if err := s.value(1); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos != len(s.data) {
		return s.fail(CodeTrailingData, "")
	}
	return nil
}

// DecodeStrict validates data, then decodes it into v refusing unknown
// fields. Field names must match the struct's JSON names exactly:
// encoding/json would also accept "Call_ID" for "call_id", which would let
// two parsers read one document differently. Missing fields are the
// caller's to check.
func DecodeStrict(data []byte, maxBytes int, v any) error {
	return DecodeStrictCarrier(data, maxBytes, 0, v)
}

// DecodeStrictCarrier is DecodeStrict for a document that carries another
// one `levels` containers down, held to MaxDepth itself (ValidateCarrier):
// the run API's request, which carries a manifest.
func DecodeStrictCarrier(data []byte, maxBytes, levels int, v any) error {
	if err := ValidateCarrier(data, maxBytes, levels); err != nil {
		return err
	}
	if err := exactNames(data, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr):
			return &Error{Code: CodeTypeMismatch, Offset: int(typeErr.Offset), Detail: "field " + typeErr.Field}
		case bytes.HasPrefix([]byte(err.Error()), []byte("json: unknown field")):
			return &Error{Code: CodeUnknownField, Detail: err.Error()[len("json: "):]}
		default:
			return &Error{Code: CodeSyntax, Detail: err.Error()}
		}
	}
	return nil
}

// scanner is a recursive-descent JSON validator. It exists because
// encoding/json silently replaces invalid UTF-8 and lone surrogates and
// keeps the last of duplicate keys; a guest must not be able to make two
// parties read one document differently.
type scanner struct {
	data []byte
	pos  int
	// build: each value scanned is also decoded, into v (ParseStrict).
	// Validate leaves it off and allocates only for duplicate-key checks.
	build bool
	v     any
	// member, when set, is given each member of the top-level object, its
	// value's bytes as they stand in data, once the value checked out
	// (Fields).
	member func(key string, value []byte) error
	// carrier is how many levels deeper than MaxDepth containers may go:
	// those of a document that carries another, which keeps its own
	// MaxDepth (ValidateCarrier).
	carrier int
}

func (s *scanner) fail(code, detail string) error {
	return &Error{Code: code, Offset: s.pos, Detail: detail}
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

func (s *scanner) value(depth int) error {
	if s.pos >= len(s.data) {
		return s.fail(CodeSyntax, "unexpected end of input")
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(depth)
	case c == '[':
		return s.array(depth)
	case c == '"':
		v, err := s.str()
		if s.build {
			s.v = v
		}
		return err
	case c == 't':
		s.v = true // no allocation: the runtime keeps boxed bools
		return s.literal("true")
	case c == 'f':
		s.v = false
		return s.literal("false")
	case c == 'n':
		s.v = nil
		return s.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return s.number()
	default:
		return s.fail(CodeSyntax, "unexpected character")
	}
}

func (s *scanner) literal(word string) error {
	if !bytes.HasPrefix(s.data[s.pos:], []byte(word)) {
		return s.fail(CodeSyntax, "invalid literal")
	}
	s.pos += len(word)
	return nil
}

func (s *scanner) object(depth int) error {
	if depth > MaxDepth+s.carrier {
		return s.fail(CodeTooDeep, "")
	}
	s.pos++ // '{'
	s.skipSpace()
	// Built, the object is its own record of the keys seen.
	var members map[string]any
	if s.build {
		members = make(map[string]any)
		defer func() { s.v = members }()
	}
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	var seen map[string]struct{}
	if !s.build {
		seen = make(map[string]struct{})
	}
	for {
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return s.fail(CodeSyntax, "expected object key")
		}
		keyAt := s.pos
		key, err := s.str()
		if err != nil {
			return err
		}
		dup := false
		if s.build {
			_, dup = members[key] // recorded once its value is built
		} else if _, dup = seen[key]; !dup {
			seen[key] = struct{}{}
		}
		if dup {
			return &Error{Code: CodeDuplicateKey, Offset: keyAt}
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return s.fail(CodeSyntax, "expected ':'")
		}
		s.pos++
		s.skipSpace()
		valueAt := s.pos
		if err := s.value(depth + 1); err != nil {
			return err
		}
		if s.build {
			members[key] = s.v
		}
		if depth == 1 && s.member != nil {
			if err := s.member(key, s.data[valueAt:s.pos]); err != nil {
				return err
			}
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail(CodeSyntax, "unterminated object")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return s.fail(CodeSyntax, "expected ',' or '}'")
		}
	}
}

func (s *scanner) array(depth int) error {
	if depth > MaxDepth+s.carrier {
		return s.fail(CodeTooDeep, "")
	}
	s.pos++ // '['
	s.skipSpace()
	var elems []any
	if s.build {
		elems = make([]any, 0) // [] is an empty slice, as encoding/json decodes it
		defer func() { s.v = elems }()
	}
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		s.skipSpace()
		if err := s.value(depth + 1); err != nil {
			return err
		}
		if s.build {
			elems = append(elems, s.v)
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return s.fail(CodeSyntax, "unterminated array")
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return s.fail(CodeSyntax, "expected ',' or ']'")
		}
	}
}

// str scans a string starting at '"' and returns its unescaped value.
func (s *scanner) str() (string, error) {
	s.pos++ // opening quote
	var out []byte
	start := s.pos
	for s.pos < len(s.data) {
		c := s.data[s.pos]
		switch {
		case c == '"':
			if out == nil {
				v := string(s.data[start:s.pos])
				s.pos++
				return v, nil
			}
			out = append(out, s.data[start:s.pos]...)
			s.pos++
			return string(out), nil
		case c < 0x20:
			return "", s.fail(CodeSyntax, "control character in string")
		case c == '\\':
			out = append(out, s.data[start:s.pos]...)
			r, err := s.escape()
			if err != nil {
				return "", err
			}
			out = utf8.AppendRune(out, r)
			start = s.pos
		default:
			s.pos++
		}
	}
	return "", s.fail(CodeSyntax, "unterminated string")
}

// escape decodes one escape sequence at s.pos ('\\'), pairing surrogates.
func (s *scanner) escape() (rune, error) {
	if s.pos+1 >= len(s.data) {
		return 0, s.fail(CodeSyntax, "truncated escape")
	}
	s.pos++
	c := s.data[s.pos]
	s.pos++
	switch c {
	case '"', '\\', '/':
		return rune(c), nil
	case 'b':
		return '\b', nil
	case 'f':
		return '\f', nil
	case 'n':
		return '\n', nil
	case 'r':
		return '\r', nil
	case 't':
		return '\t', nil
	case 'u':
		r, err := s.hex4()
		if err != nil {
			return 0, err
		}
		switch {
		case utf16.IsSurrogate(r) && r < 0xDC00:
			if s.pos+1 >= len(s.data) || s.data[s.pos] != '\\' || s.data[s.pos+1] != 'u' {
				return 0, s.fail(CodeBadSurrogate, "high surrogate without low surrogate")
			}
			s.pos += 2
			lo, err := s.hex4()
			if err != nil {
				return 0, err
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return 0, s.fail(CodeBadSurrogate, "high surrogate without low surrogate")
			}
			return utf16.DecodeRune(r, lo), nil
		case utf16.IsSurrogate(r):
			return 0, s.fail(CodeBadSurrogate, "lone low surrogate")
		}
		return r, nil
	default:
		return 0, s.fail(CodeSyntax, "invalid escape")
	}
}

func (s *scanner) hex4() (rune, error) {
	if s.pos+4 > len(s.data) {
		return 0, s.fail(CodeSyntax, "truncated \\u escape")
	}
	v, err := strconv.ParseUint(string(s.data[s.pos:s.pos+4]), 16, 32)
	if err != nil {
		return 0, s.fail(CodeSyntax, "invalid \\u escape")
	}
	s.pos += 4
	return rune(v), nil
}

func (s *scanner) number() error {
	start := s.pos
	if s.data[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(s.data) && s.data[s.pos] == '0':
		s.pos++
	case s.pos < len(s.data) && s.data[s.pos] >= '1' && s.data[s.pos] <= '9':
		s.digits()
	default:
		return s.fail(CodeSyntax, "invalid number")
	}
	if s.pos < len(s.data) && s.data[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return s.fail(CodeSyntax, "invalid number")
		}
	}
	if s.pos < len(s.data) && (s.data[s.pos] == 'e' || s.data[s.pos] == 'E') {
		s.pos++
		if s.pos < len(s.data) && (s.data[s.pos] == '+' || s.data[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return s.fail(CodeSyntax, "invalid number")
		}
	}
	f, err := strconv.ParseFloat(string(s.data[start:s.pos]), 64)
	if err != nil || math.IsInf(f, 0) {
		return &Error{Code: CodeBadNumber, Offset: start}
	}
	if s.build {
		s.v = json.Number(s.data[start:s.pos])
	}
	return nil
}

func (s *scanner) digits() int {
	n := 0
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
		n++
	}
	return n
}

// exactNames walks a document beside the Go type it is decoded into and
// refuses an object key that is not exactly one of the struct's JSON field
// names. It descends only where a struct can be reached, so an opaque
// member (json.RawMessage, any, strings) is never decoded twice.
func exactNames(raw []byte, t reflect.Type) error {
	t = deref(t)
	if t == nil || !holdsStruct(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := jsonFields(t)
		if !anyHoldsStruct(fields) {
			// A flat struct: its keys are enough, and the scanner hands
			// them over without copying any value. Anything but an
			// unknown key is a type mismatch, json.Decoder's to report.
			s := scanner{data: raw, member: func(key string, _ []byte) error {
				if _, known := fields[key]; !known {
					return unknownField(key)
				}
				return nil
			}}
			if err := s.document(len(raw)); CodeOf(err) == CodeUnknownField {
				return err
			}
			return nil
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil {
			return nil // a type mismatch: json.Decoder reports it
		}
		for key, val := range obj {
			ft, known := fields[key]
			if !known {
				return unknownField(key)
			}
			if err := exactNames(val, ft); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		var arr []json.RawMessage
		if json.Unmarshal(raw, &arr) == nil {
			for _, el := range arr {
				if err := exactNames(el, t.Elem()); err != nil {
					return err
				}
			}
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) == nil {
			for _, el := range obj {
				if err := exactNames(el, t.Elem()); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func deref(t reflect.Type) reflect.Type {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// holdsStruct reports whether decoding into t can reach a struct.
func holdsStruct(t reflect.Type) bool {
	switch t = deref(t); t.Kind() {
	case reflect.Struct:
		return true
	case reflect.Slice, reflect.Array, reflect.Map:
		return holdsStruct(t.Elem())
	}
	return false
}

// jsonFields maps the JSON names of a struct's exported fields to their
// types (embedded structs are not used by apysup's wire types).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func anyHoldsStruct(fields map[string]reflect.Type) bool {
	for _, t := range fields {
		if holdsStruct(t) {
			return true
		}
	}
	return false
}

// unknownField refuses a member the decoding has no field for.
func unknownField(key string) error {
	return &Error{Code: CodeUnknownField, Detail: "unknown field " + strconv.Quote(key)}
}
