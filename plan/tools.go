package plan

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/apysup/apysup/internal/pattern"
)

// ToolFormat names the tool-definition shape of one LLM API.
type ToolFormat string

const (
	// ToolFormatAnthropic is the Messages API's tools array:
	// {"name", "description", "input_schema"}.
	ToolFormatAnthropic ToolFormat = "anthropic"
	// ToolFormatOpenAI is the Chat Completions API's tools array:
	// {"type": "function", "function": {"name", "description", "parameters"}},
	// without "strict".
	ToolFormatOpenAI ToolFormat = "openai"
	// ToolFormatMCP is the tools of an MCP tools/list result: {"name",
	// "description", "inputSchema", "outputSchema"?, "annotations", "_meta"}.
	ToolFormatMCP ToolFormat = "mcp"
)

// MCPCapabilityMeta is the _meta key of an MCP tool that names its
// capability (MCP's prefix/name form, under apysup's reverse-DNS prefix).
const MCPCapabilityMeta = "io.github.apysup/capability"

// toolNamePattern is the tool name every supported API accepts: the
// Messages API's and Chat Completions' rule, inside MCP's wider one
// (which also allows "." and 128 characters).
var toolNamePattern = pattern.Run("a-zA-Z0-9_-", 1, 64)

// ToolName is the tool name of a capability: every "." becomes "-". A
// capability name is [a-z0-9_] words joined by "." and at most 64
// characters, and has no "-", so the mapping keeps the length, always
// gives a name toolNamePattern accepts, and is one-to-one: replacing "-"
// by "." gives the capability back. It refuses what is not a capability
// name (invalid_tool_name).
func ToolName(capability string) (string, error) {
	tool := strings.ReplaceAll(capability, ".", "-")
	if !ValidName(capability) || !toolNamePattern.MatchString(tool) {
		return "", errorf(CodeInvalidToolName, "capability name %s has no tool name matching %s", quoteName(capability), toolNamePattern)
	}
	return tool, nil
}

// ToolSet is a Plan's capabilities as one API's tool definitions, with the
// way back from the tool name a model calls to the capability.
type ToolSet struct {
	Tools   []json.RawMessage `json:"tools"`   // each the API's own tool definition, sorted by capability
	Mapping map[string]string `json:"mapping"` // tool name -> capability name
}

// ToolSet renders every capability in format. Each tool's input schema is
// the capability's, which must be an object schema ("type": "object" at
// its root, or {} which becomes {"type": "object"}: the Broker admits
// only an object of arguments anyway). Every problem is reported at once:
// invalid_tool_format, invalid_tool_name, tool_name_collision,
// tool_schema_not_object. Tool sets grant nothing; the Broker admits each
// call by its capability name.
func (p *Plan) ToolSet(format ToolFormat) (*ToolSet, error) {
	switch format {
	case ToolFormatAnthropic, ToolFormatOpenAI, ToolFormatMCP:
	default:
		return nil, errorf(CodeInvalidToolFormat, "tool format must be anthropic, openai or mcp")
	}
	set := &ToolSet{Tools: []json.RawMessage{}, Mapping: map[string]string{}}
	var problems Problems
	for _, c := range p.ordered {
		s := c.spec
		name, err := ToolName(s.Name)
		if err != nil {
			problems = append(problems, at("", err))
			continue
		}
		if other, taken := set.Mapping[name]; taken {
			problems = append(problems, errorf(CodeToolNameCollision, "capabilities %s and %s have one tool name %s", other, s.Name, name))
			continue
		}
		input, ok := objectSchema(s.InputSchema)
		if !ok {
			problems = append(problems, errorf(CodeToolSchemaNotObject, "capability %s: a tool's input schema must have \"type\": \"object\" at its root", s.Name))
			continue
		}
		set.Mapping[name] = s.Name
		set.Tools = append(set.Tools, toolDefinition(format, name, s, input))
	}
	if len(problems) > 0 {
		return nil, problems
	}
	return set, nil
}

// objectSchema is schema (canonical JSON) as the object schema the tool
// APIs require at the root: {} and true become {"type":"object"}; a schema
// whose root says "type": "object" is kept as it is; anything else is not
// one (ok false).
func objectSchema(schema json.RawMessage) (json.RawMessage, bool) {
	if s := string(schema); s == "{}" || s == "true" {
		return json.RawMessage(`{"type":"object"}`), true
	}
	return schema, typeObject(schema)
}

// typeObject reports whether schema's root says "type": "object".
func typeObject(schema json.RawMessage) bool {
	var root map[string]json.RawMessage
	return json.Unmarshal(schema, &root) == nil && string(root["type"]) == `"object"`
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

// mcpTool carries only readOnlyHint among MCP's annotations: it is what
// a capability's effect says for certain (a read changes nothing). The
// others are left to MCP's defaults, which assume the worst.
type mcpTool struct {
	Name         string            `json:"name"`
	Description  string            `json:"description,omitempty"`
	InputSchema  json.RawMessage   `json:"inputSchema"`
	OutputSchema json.RawMessage   `json:"outputSchema,omitempty"`
	Annotations  mcpAnnotations    `json:"annotations"`
	Meta         map[string]string `json:"_meta"`
}

type mcpAnnotations struct {
	ReadOnlyHint bool `json:"readOnlyHint"`
}

func toolDefinition(format ToolFormat, name string, s Spec, input json.RawMessage) json.RawMessage {
	var v any
	switch format {
	case ToolFormatAnthropic:
		v = anthropicTool{Name: name, Description: s.Description, InputSchema: input}
	case ToolFormatOpenAI:
		v = openAITool{Type: "function", Function: openAIFunction{Name: name, Description: s.Description, Parameters: input}}
	case ToolFormatMCP:
		t := mcpTool{Name: name, Description: s.Description, InputSchema: input,
			Annotations: mcpAnnotations{ReadOnlyHint: s.Effect == EffectRead},
			Meta:        map[string]string{MCPCapabilityMeta: s.Name}}
		// MCP restricts an output schema to "type": "object" at its root;
		// a capability whose results may be anything lists none.
		if typeObject(s.OutputSchema) {
			t.OutputSchema = s.OutputSchema
		}
		v = t
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v) // strings and canonical JSON always encode
	return bytes.TrimSpace(buf.Bytes())
}
