package serve

import (
	"encoding/json"
	"errors"
	"path"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apysup/apysup/internal/sandbox"
)

// FuzzParseRunRequest: any body is either refused with a typed code that
// does not echo it, or parsed into a request whose fields are within
// their bounds.
func FuzzParseRunRequest(f *testing.F) {
	for _, seed := range []string{
		`{"source": "print(1)"}`,
		`{"source": "x", "args": ["a"], "limits": {"timeout_ms": 5, "cpus": 0.5}, "surface": "both", "approve": "api"}`,
		`{"source": "x", "workspace": {"a/b.txt": "aGk=", "c": ""}, "export": true}`,
		`{"source": "x", "workspace": {"../etc/passwd": ""}}`,
		`{"source": "x", "manifest": {"schema_version": "apysup.manifest.v1"}}`,
		`{"source": "x"} trailing`, `[]`, `null`, `{"source": "x", "limits": {"pids": -1}}`,
		`{"source": "x", "script_name": "-c"}`, `{"source": "x", "script_name": "../prelude.py"}`,
		`{"source": "x", "script_name": ".."}`, `{"source": "x", "script_name": "a\u0000"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		v, err := ParseRunRequest(body)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == "" {
				t.Fatalf("untyped refusal: %v", err)
			}
			if len(body) > 8 && strings.Contains(e.Message, string(body)) {
				t.Fatalf("the refusal echoes the body: %q", e.Message)
			}
			return
		}
		if v.Source == "" || len(v.Args) > maxArgs || v.limits.Timeout <= 0 || v.limits.CPUs <= 0 {
			t.Fatalf("accepted out of bounds: %+v", v.RunRequest)
		}
		if n := v.ScriptName; n == "" || len(n) > maxScriptName || strings.ContainsAny(n, "/\x00") ||
			strings.HasPrefix(n, ".") || n == sandbox.PreludeFile {
			t.Fatalf("accepted script name %q", n)
		}
		for p := range v.Workspace {
			if path.IsAbs(p) || p == ".." || strings.HasPrefix(p, "../") || path.Clean(p) != p {
				t.Fatalf("accepted workspace path %q", p)
			}
		}
	})
}

func FuzzParsePlanRequest(f *testing.F) {
	f.Add([]byte(`{"manifest": {}}`))
	f.Add([]byte(`{"manifest": null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		if req, err := ParsePlanRequest(body); err == nil && len(req.Manifest) == 0 {
			t.Fatal("accepted without a manifest")
		}
	})
}

// FuzzOutputEvents: however the guest's output is split into chunks, the
// stdout events carry it whole (valid UTF-8 stays the same bytes).
func FuzzOutputEvents(f *testing.F) {
	f.Add([]byte("héllo wörld ✓"), uint8(3))
	f.Add([]byte("\xe2\x9c"), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, step uint8) {
		if !utf8.Valid(data) || step == 0 {
			return
		}
		ev := newRunEvents()
		o := &outputEvents{events: ev}
		for i := 0; i < len(data); i += int(step) {
			o.publish(sandbox.Stdout, data[i:min(i+int(step), len(data))])
		}
		o.flush()
		past, _, cancel := ev.subscribe()
		cancel()
		var got strings.Builder
		for _, e := range past {
			var chunk struct{ Data string }
			if err := json.Unmarshal(e.Data, &chunk); err != nil {
				t.Fatal(err)
			}
			got.WriteString(chunk.Data)
		}
		if got.String() != string(data) {
			t.Fatalf("events carry %q, the guest wrote %q", got.String(), data)
		}
	})
}
