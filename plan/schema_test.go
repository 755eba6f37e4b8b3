package plan

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// docs/schemas/manifest.schema.json, the copy editors use, is the schema
// the parser embeds, byte for byte.
func TestManifestSchemaCopyIsCurrent(t *testing.T) {
	docs, err := os.ReadFile("../docs/schemas/manifest.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(docs, manifestSchemaJSON) {
		t.Fatal("docs/schemas/manifest.schema.json differs from plan/schemas/manifest.schema.json: copy it")
	}
	var meta struct {
		Schema, ID, Title, Description string
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(manifestSchemaJSON, &raw); err != nil {
		t.Fatal(err)
	}
	for key, dst := range map[string]*string{"$schema": &meta.Schema, "$id": &meta.ID, "title": &meta.Title, "description": &meta.Description} {
		if err := json.Unmarshal(raw[key], dst); err != nil || *dst == "" {
			t.Errorf("%s missing", key)
		}
	}
	if meta.Schema != "https://json-schema.org/draft/2020-12/schema" || !strings.HasSuffix(meta.ID, "/docs/schemas/manifest.schema.json") {
		t.Errorf("$schema %q, $id %q", meta.Schema, meta.ID)
	}
	if _, err := manifestSchema(); err != nil {
		t.Fatal(err)
	}
}

// Structural problems come from the schema, every one at its exact path,
// in the parser's words.
func TestManifestSchemaProblems(t *testing.T) {
	const c0 = `{"name":"a.b","version":"1","effect":"read","playback":"live","handler":{"kind":"builtin","id":"echo","version":"1"}}`
	for _, tc := range []struct {
		name, doc string
		want      []string
	}{
		{"empty", `{}`, []string{"capabilities: is required", "grants: is required", "max_calls: is required", "schema_version: is required"}},
		{"not an object", `[]`, []string{": must be a JSON object"}},
		{"types", `{"schema_version":"apysup.manifest.v2","max_calls":"4","capabilities":{},"grants":[1]}`,
			[]string{`capabilities: must be an array`, `grants[0]: must be a JSON object`, `max_calls: must be an integer`, `schema_version: must be "apysup.manifest.v1"`}},
		{"nested", `{"schema_version":"apysup.manifest.v1","max_calls":4,"extra":1,"capabilities":[` + c0 + `,
			{"name":"c.d","version":1,"effect":"read","playback":"live","handler":{"kind":"builtin","id":"echo"},"python":{"module":"m","function":"f","aliases":[1]},"input_schema":3}],
			"grants":[{"capability":"a.b","policy":{},"why":"x"}]}`,
			[]string{"capabilities[1].handler.version: is required", "capabilities[1].input_schema: must be a JSON Schema (an object or a boolean)",
				"capabilities[1].python.aliases[0]: must be a string", "capabilities[1].version: must be a string", "extra: unknown field", "grants[0].why: unknown field"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseManifest([]byte(tc.doc))
			ps, ok := err.(Problems)
			if !ok {
				t.Fatalf("got %T %v", err, err)
			}
			var got []string
			for _, p := range ps {
				if p.Code != CodeInvalidManifest {
					t.Errorf("code %s", p.Code)
				}
				got = append(got, p.Path+": "+p.Message)
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}
