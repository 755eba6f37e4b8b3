// Package canonjson owns the byte-level encodings every apysup digest rests
// on: RFC 8785 (JCS) canonical JSON, domain-separated SHA-256 digests, and the
// strict parser for JSON that crosses a trust boundary (anything a guest
// sends, and the manifests a host user writes).
//
// It must never accept input it cannot canonicalise: invalid UTF-8, lone
// surrogates, duplicate keys, numbers outside IEEE-754 double range, or
// trailing data are typed refusals, never silent repairs.
package canonjson
