package plan

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"

	"github.com/apysup/apysup/internal/canonjson"
)

// manifestSchemaJSON is the JSON Schema (2020-12) of a manifest: its
// structural validation, which ParseManifest runs first, and the schema
// editors use (docs/schemas/manifest.schema.json is a byte-identical copy,
// checked by a test).
//
//go:embed schemas/manifest.schema.json
var manifestSchemaJSON []byte

// manifestSchema compiles manifestSchemaJSON once.
var manifestSchema = sync.OnceValues(func() (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(manifestSchemaJSON))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(refuseLoader{})
	const loc = "apysup:///manifest.schema.json"
	if err := c.AddResource(loc, doc); err != nil {
		return nil, err
	}
	return c.Compile(loc)
})

// schemaProblems validates a manifest (strict JSON, already checked)
// against manifestSchemaJSON and returns every structural problem with its
// JSON path, in the messages and code of the rest of the parser.
func schemaProblems(data []byte) Problems {
	sch, err := manifestSchema()
	if err != nil {
		return Problems{errorf(CodeInvalidManifest, "the manifest schema does not compile: %v", err)}
	}
	doc, err := canonjson.ParseStrict(data, canonjson.MaxHostBytes)
	if err != nil {
		return Problems{{Code: CodeInvalidManifest, Message: "not strict JSON: " + err.Error()}}
	}
	var ve *jsonschema.ValidationError
	if err := sch.Validate(doc); !errors.As(err, &ve) {
		return nil
	}
	var out Problems
	for _, leaf := range schemaLeaves(ve, nil) {
		out = append(out, leafProblems(leaf)...)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out.unique()
}

// schemaLeaves lists the causes that have no causes themselves.
func schemaLeaves(e *jsonschema.ValidationError, out []*jsonschema.ValidationError) []*jsonschema.ValidationError {
	if len(e.Causes) == 0 {
		return append(out, e)
	}
	for _, c := range e.Causes {
		out = schemaLeaves(c, out)
	}
	return out
}

// leafProblems turns one failed keyword into problems: one per missing or
// unknown member, at the member's own path.
func leafProblems(e *jsonschema.ValidationError) Problems {
	at := jsonPath(e.InstanceLocation)
	p := func(path, message string) *Error {
		return &Error{Code: CodeInvalidManifest, Path: path, Message: message}
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		var out Problems
		for _, m := range k.Missing {
			out = append(out, p(joinPath(at, m), "is required"))
		}
		return out
	case *kind.AdditionalProperties:
		var out Problems
		for _, m := range k.Properties {
			out = append(out, p(joinPath(at, m), "unknown field"))
		}
		return out
	case *kind.Type:
		return Problems{p(at, typeMessage(k.Want))}
	case *kind.Const:
		want, _ := json.Marshal(k.Want)
		return Problems{p(at, "must be "+string(want))}
	}
	// A keyword the schema gained later: its own words, without the value.
	return Problems{p(at, "does not match the manifest schema ("+strings.Join(e.ErrorKind.KeywordPath(), "/")+")")}
}

func typeMessage(want []string) string {
	switch strings.Join(want, ",") {
	case "string":
		return "must be a string"
	case "integer":
		return "must be an integer"
	case "object":
		return "must be a JSON object"
	case "array":
		return "must be an array"
	case "object,boolean", "boolean,object":
		return "must be a JSON Schema (an object or a boolean)"
	}
	return "must be of type " + strings.Join(want, " or ")
}

// jsonPath spells an instance location as the parser does:
// capabilities[1].handler.kind. The schema only descends into the
// manifest's own objects and arrays, whose keys are never numbers.
func jsonPath(loc []string) string {
	path := ""
	for _, seg := range loc {
		if _, err := strconv.Atoi(seg); err == nil {
			path += "[" + seg + "]"
		} else {
			path = joinPath(path, seg)
		}
	}
	return path
}

// joinPath is key under base, without a stray dot.
func joinPath(base, key string) string {
	if base == "" {
		return key
	}
	return base + "." + key
}
