package handlers

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/plan"
)

// TestStrictAcceptanceNeedsAProvider: a capability asking for strict
// acceptance is refused when it is sealed (and built) unless its handler
// declares every guarantee; other requirements take any handler.
func TestStrictAcceptanceNeedsAProvider(t *testing.T) {
	db := filepath.Join(t.TempDir(), "kv.db")
	kv := fmt.Sprintf(`{"kind":"kv","id":"store","version":"1","config":{"path":%q,"op":"put"}}`, db)
	echo := `{"kind":"builtin","id":"echo","version":"1"}`
	for _, tc := range []struct {
		name, handler, effect, acceptance string
		refused                           bool
	}{
		{"builtin strict", echo, "read", "strict", true},
		{"plain kv strict", kv, "write", "strict", true},
		{"plain kv no_blind_retry", kv, "write", "no_blind_retry", false},
		{"builtin off", echo, "read", "off", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := plan.ParseManifest([]byte(`{"schema_version":"apysup.manifest.v1","max_calls":4,"capabilities":[
				{"name":"a.b","version":"1","effect":"` + tc.effect + `","playback":"live","handler":` + tc.handler + `,
				 "input_schema":{"type":"object"},"output_schema":{},"acceptance":"` + tc.acceptance + `"}],
				"grants":[{"capability":"a.b","policy":{}}]}`))
			if err != nil {
				t.Fatal(err)
			}
			_, sealErr := m.Seal(Checker{})
			_, closer, buildErr := Build(m, Options{})
			if closer != nil {
				closer.Close()
			}
			for what, err := range map[string]error{"seal": sealErr, "build": buildErr} {
				if got := problemAt(err, broker.CodeAcceptanceUnsupported, "capabilities[0].handler"); got != tc.refused {
					t.Errorf("%s: %v", what, err)
				}
				if !tc.refused && err != nil {
					t.Errorf("%s: %v", what, err)
				}
			}
		})
	}
}
