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
// (see Validate). raw must hold exactly one JSON value.
func Canonical(raw []byte) ([]byte, error) {
	if err := Validate(raw, MaxHostBytes); err != nil {
		return nil, err
	}
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
