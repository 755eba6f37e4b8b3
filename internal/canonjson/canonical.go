package canonjson

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/gowebpki/jcs"
)

// MaxHostBytes bounds host-authored documents (manifests, plans, receipts)
// that are canonicalised; guest input has its own, smaller limit.
const MaxHostBytes = 16 << 20

// Canonical returns the RFC 8785 form of raw after checking it strictly
// (see Validate). raw must hold exactly one JSON value. The result never
// shares raw's memory: a document already in its canonical form
// (alreadyCanonical) is copied, not transformed.
func Canonical(raw []byte) ([]byte, error) {
	if err := Validate(raw, MaxHostBytes); err != nil {
		return nil, err
	}
	if alreadyCanonical(raw) {
		return bytes.Clone(raw), nil
	}
	return transform(raw)
}

// CanonicalValidated is Canonical for bytes that already passed Validate
// (for example a member Fields returned), on the hot path: it skips the
// second validation pass, and returns raw itself, not a copy, when raw is
// already in its canonical form, so that a caller that owns raw (or only
// compares) pays nothing for a canonical document.
func CanonicalValidated(raw []byte) ([]byte, error) {
	if alreadyCanonical(raw) {
		return raw, nil
	}
	return transform(raw)
}

// transform is gowebpki/jcs's RFC 8785 transform, its error typed.
func transform(raw []byte) ([]byte, error) {
	out, err := jcs.Transform(raw)
	if err != nil {
		return nil, &Error{Code: CodeSyntax, Detail: err.Error()}
	}
	return out, nil
}

// Marshal encodes v with encoding/json (HTML escaping off) and returns its
// canonical form.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("canonjson: marshal: %w", err)
	}
	return Canonical(bytes.TrimRight(buf.Bytes(), "\n"))
}

// MustMarshal is Marshal for values built by the host from known-good types;
// it panics on failure, which would be a programming error.
func MustMarshal(v any) []byte {
	out, err := Marshal(v)
	if err != nil {
		panic(err)
	}
	return out
}

// DigestOf canonicalises v and digests it in domain.
func DigestOf(domain string, v any) (string, error) {
	c, err := Marshal(v)
	if err != nil {
		return "", err
	}
	return Digest(domain, c), nil
}

// DecodeCanonical decodes bytes that already passed Validate (for example
// the output of Canonical) into Go values: maps, slices, strings, bools,
// nil and json.Number. It is ParseStrict without the size bound: bytes
// that did not pass Validate are refused as it refuses them.
func DecodeCanonical(canonical []byte) (any, error) { return ParseStrict(canonical, len(canonical)) }

// AppendString appends s as an RFC 8785 string literal: only '"', '\\' and
// control characters are escaped (the short forms where JSON has them,
// else \u00xx in lowercase hex); everything else is written as UTF-8.
// s must be valid UTF-8.
func AppendString(dst []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	dst = append(dst, '"')
	start := 0 // the run of bytes written as they are, not yet appended
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		start = i + 1
		switch {
		case c == '"' || c == '\\':
			dst = append(dst, '\\', c)
		case c == '\b':
			dst = append(dst, '\\', 'b')
		case c == '\t':
			dst = append(dst, '\\', 't')
		case c == '\n':
			dst = append(dst, '\\', 'n')
		case c == '\f':
			dst = append(dst, '\\', 'f')
		case c == '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
