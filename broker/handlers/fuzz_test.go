package handlers

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/apysup/apysup/plan"
)

// FuzzHTTPRequest: whatever the guest's arguments, the request goes to the
// template's scheme, host and port, its path gains no dot segments, its
// query no parameters, and a refusal is a typed code.
func FuzzHTTPRequest(f *testing.F) {
	for _, seed := range []string{
		`{"x":"a","y":"b"}`, `{"x":"..","y":"b"}`, `{"x":"a/../../admin","y":"1&admin=1"}`,
		`{"x":"@evil.example:80","y":"#frag"}`, `{"x":"%2e%2e","y":"%26"}`, `{"x":1e400}`, `{"x":12.5,"y":"ü"}`,
		`{"x":"a?b=c","y":"d e","z":1}`, `[]`, `{"x":null}`,
	} {
		f.Add([]byte(seed))
	}
	h := &httpHandler{method: "POST", allowed: allowedHosts{"127.0.0.1:8080": true},
		grant: &plan.HTTPGrant{AllowedHosts: []string{"127.0.0.1:8080"}, PathPrefixes: []string{"/a/"}}}
	if msg := h.parseTemplate("http://127.0.0.1:8080/a/{x}/b?q={y}&fixed=1"); msg != "" {
		f.Fatal(msg)
	}
	f.Fuzz(func(t *testing.T, args []byte) {
		target, body, err := h.request(json.RawMessage(args))
		if err != nil {
			if CodeOf(err) == "" {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if target.Scheme != "http" || target.Host != "127.0.0.1:8080" || target.User != nil || target.Fragment != "" {
			t.Fatalf("request escaped its host: %s", target)
		}
		segments := strings.Split(target.EscapedPath(), "/")
		if len(segments) != 4 || segments[1] != "a" || segments[3] != "b" || segments[2] == "." || segments[2] == ".." {
			t.Fatalf("path changed shape: %q", target.EscapedPath())
		}
		q, err := url.ParseQuery(target.RawQuery)
		if err != nil || len(q) != 2 || len(q["q"]) != 1 || q.Get("fixed") != "1" {
			t.Fatalf("query changed shape: %q", target.RawQuery)
		}
		if !json.Valid(body) {
			t.Fatalf("body not JSON: %q", body)
		}
	})
}
