package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// openAPIDoc is the served document, parsed.
type openAPIDoc struct {
	Paths map[string]map[string]struct {
		RequestBody *struct {
			Content map[string]struct {
				Example json.RawMessage `json:"example"`
			} `json:"content"`
		} `json:"requestBody"`
		Responses map[string]struct {
			Content map[string]struct {
				Schema  json.RawMessage `json:"schema"`
				Example json.RawMessage `json:"example"`
			} `json:"content"`
		} `json:"responses"`
	} `json:"paths"`
	Components struct {
		Schemas map[string]json.RawMessage `json:"schemas"`
	} `json:"components"`
}

func loadOpenAPI(t *testing.T) openAPIDoc {
	t.Helper()
	var doc openAPIDoc
	if err := json.Unmarshal(OpenAPI, &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	return doc
}

// schemas compiles the document's component schemas (and a response's
// inline schema) with santhosh-tekuri/jsonschema: the components become
// $defs of one 2020-12 schema.
type schemas struct {
	c   *jsonschema.Compiler
	doc openAPIDoc
	n   int
}

func newSchemas(doc openAPIDoc) *schemas {
	return &schemas{c: jsonschema.NewCompiler(), doc: doc}
}

func (s *schemas) compile(t *testing.T, schema json.RawMessage) *jsonschema.Schema {
	t.Helper()
	defs, _ := json.Marshal(s.doc.Components.Schemas)
	text := fmt.Sprintf(`{"$schema": "https://json-schema.org/draft/2020-12/schema", "$defs": %s, "allOf": [%s]}`, defs, schema)
	text = strings.ReplaceAll(text, "#/components/schemas/", "#/$defs/")
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	s.n++
	url := "mem:///schema" + strconv.Itoa(s.n) + ".json"
	if err := s.c.AddResource(url, v); err != nil {
		t.Fatal(err)
	}
	sch, err := s.c.Compile(url)
	if err != nil {
		t.Fatalf("compiling %s: %v", schema, err)
	}
	return sch
}

func (s *schemas) component(t *testing.T, name string) *jsonschema.Schema {
	return s.compile(t, json.RawMessage(`{"$ref": "#/components/schemas/`+name+`"}`))
}

func validate(t *testing.T, sch *jsonschema.Schema, data []byte, what string) {
	t.Helper()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: not JSON: %v", what, err)
	}
	if err := sch.Validate(v); err != nil {
		t.Errorf("%s does not validate against the document: %v\n%s", what, err, data)
	}
}

// TestOpenAPIAgreesWithRouter: every route the router serves is in the
// document and every operation of the document is a route.
func TestOpenAPIAgreesWithRouter(t *testing.T) {
	doc := loadOpenAPI(t)
	var documented, served []string
	for path, ops := range doc.Paths {
		for method := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
		}
	}
	for _, rt := range routes {
		served = append(served, rt.pattern)
	}
	slices.Sort(documented)
	slices.Sort(served)
	if !slices.Equal(documented, served) {
		t.Errorf("routes differ:\ndocument %q\nrouter   %q", documented, served)
	}
}

// TestOpenAPIExamplesValidate: every request and response example of the
// document validates against its schema, and every error code a response
// names has that status (HTTPStatus).
func TestOpenAPIExamplesValidate(t *testing.T) {
	doc := loadOpenAPI(t)
	s := newSchemas(doc)
	checked := 0
	for path, ops := range doc.Paths {
		for method, op := range ops {
			if op.RequestBody != nil {
				ex := op.RequestBody.Content["application/json"].Example
				if ex == nil {
					t.Errorf("%s %s: the request has no example", method, path)
					continue
				}
				// The request schema is named by operation: RunRequest, PlanRequest or RevokeRequest.
				name := map[string]string{"/v1/runs": "RunRequest", "/v1/plans": "PlanRequest", "/v1/grants/revoke": "RevokeRequest"}[path]
				if name == "" {
					t.Errorf("%s %s: a request body without a known schema", method, path)
					continue
				}
				validate(t, s.component(t, name), ex, method+" "+path+" request example")
				checked++
			}
			for status, resp := range op.Responses {
				for media, c := range resp.Content {
					if c.Example == nil {
						continue
					}
					validate(t, s.compile(t, c.Schema), c.Example, fmt.Sprintf("%s %s %s %s example", method, path, status, media))
					checked++
					var e Error
					if json.Unmarshal(c.Example, &e) == nil && e.Code != "" && strconv.Itoa(HTTPStatus(e.Code)) != status {
						t.Errorf("%s %s: %s is documented as %s, served as %d", method, path, e.Code, status, HTTPStatus(e.Code))
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Fatalf("only %d examples checked", checked)
	}
	// The handlers' own request parsers accept the request examples.
	for path, parse := range map[string]func([]byte) error{
		"/v1/runs":          func(b []byte) error { _, err := ParseRunRequest(b); return err },
		"/v1/plans":         func(b []byte) error { _, err := ParsePlanRequest(b); return err },
		"/v1/grants/revoke": func(b []byte) error { _, err := ParseRevokeRequest(b); return err },
	} {
		if err := parse(doc.Paths[path]["post"].RequestBody.Content["application/json"].Example); err != nil {
			t.Errorf("%s: the example is refused: %v", path, err)
		}
	}
}

// TestOpenAPIRequestFields: the request schemas name exactly the JSON
// fields of the structs the handlers decode (strictly: an unknown field is
// refused), so that neither offers what the other refuses.
func TestOpenAPIRequestFields(t *testing.T) {
	doc := loadOpenAPI(t)
	for name, v := range map[string]any{"RunRequest": RunRequest{}, "PlanRequest": PlanRequest{}, "RunLimits": RunLimits{}} {
		var schema struct {
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal(doc.Components.Schemas[name], &schema); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var documented, decoded []string
		for p := range schema.Properties {
			documented = append(documented, p)
		}
		typ := reflect.TypeOf(v)
		for i := range typ.NumField() {
			tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ",")
			if tag != "" && tag != "-" {
				decoded = append(decoded, tag)
			}
		}
		slices.Sort(documented)
		slices.Sort(decoded)
		if !slices.Equal(documented, decoded) {
			t.Errorf("%s: the document has %v, the handler decodes %v", name, documented, decoded)
		}
	}
}
