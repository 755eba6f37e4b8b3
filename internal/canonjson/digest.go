package canonjson

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Digest domains (SPEC.md section 3). A digest computed in one domain can
// never be mistaken for one computed in another.
const (
	DomainGrant     = "apysup.grant.v1"
	DomainPlan      = "apysup.plan.v1"
	DomainReceipt   = "apysup.receipt.v1"
	DomainRequest   = "apysup.request.v1"
	DomainResponse  = "apysup.response.v1"
	DomainWorkspace = "apysup.workspace.v1"
	DomainEvent     = "apysup.event.v1"
)

// DigestPrefix starts every digest string.
const DigestPrefix = "sha256:"

// Digest returns "sha256:<hex>" of DOMAIN || 0x00 || canonical.
func Digest(domain string, canonical []byte) string {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write([]byte{0})
	h.Write(canonical)
	return DigestPrefix + hex.EncodeToString(h.Sum(nil))
}

// PlainDigest returns "sha256:<hex>" of data without a domain, for bodies
// whose digest is a fact about bytes (transport evidence body_sha256).
func PlainDigest(data []byte) string {
	sum := sha256.Sum256(data)
	return DigestPrefix + hex.EncodeToString(sum[:])
}

// IsDigest reports whether s is a well-formed "sha256:<64 lowercase hex>".
func IsDigest(s string) bool {
	hexPart, ok := strings.CutPrefix(s, DigestPrefix)
	if !ok || len(hexPart) != 64 {
		return false
	}
	for i := 0; i < len(hexPart); i++ {
		c := hexPart[i]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
