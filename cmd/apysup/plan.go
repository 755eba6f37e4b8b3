package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/plan"
)

func planCommand() *cli.Command {
	return &cli.Command{
		Name:  "plan",
		Usage: "seal a manifest into a Plan and show its projections",
		Description: "A manifest (JSON, schema_version apysup.manifest.v1) lists capabilities and grants.\n" +
			"Sealing validates every field, reports every problem with its JSON path, and prints the\n" +
			"Plan identity: sha256 of the canonical evidence document. Grant policies never leave the host:\n" +
			"only their digests appear in any output.",
		Subcommands: []*cli.Command{
			{
				Name:      "seal",
				Usage:     "validate MANIFEST and print the Plan digest",
				ArgsUsage: "MANIFEST",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "json", Usage: `print {"schema_version", "plan_sha256", "evidence": {...}} (the evidence document whose digest is the identity)`},
				},
				Action: func(c *cli.Context) error {
					p, err := sealArg(c)
					if err != nil {
						return err
					}
					if !c.Bool("json") {
						fmt.Fprintln(c.App.Writer, p.Identity())
						return nil
					}
					return printJSON(c, "apysup.plan_seal.v1", struct {
						PlanSHA256 string          `json:"plan_sha256"`
						Evidence   json.RawMessage `json:"evidence"`
					}{p.Identity(), p.EvidenceDocument()})
				},
			},
			{
				Name:      "tools",
				Usage:     "print the Plan's tools as an LLM API takes them, and the way back to capabilities",
				ArgsUsage: "MANIFEST",
				Description: "Lists each tool's name, capability and description; --format prints the document whose\n" +
					"tools array is what one API takes, and whose mapping routes a model's tool call back:\n" +
					"  anthropic  Messages API tools: {name, description, input_schema}   (jq .tools)\n" +
					"  openai     Chat Completions tools: {type: \"function\", function: {name, description,\n" +
					"             parameters}}, without strict (jq .tools); for the Responses API's flat form:\n" +
					"             jq '.tools | map({type, strict: false} + .function)'\n" +
					"  mcp        the tools of a tools/list result: {name, description, inputSchema, outputSchema\n" +
					"             (object schemas only), annotations.readOnlyHint, _meta} (jq '{tools}')\n" +
					"A tool's name is its capability's with every \".\" made \"-\" (weather.get is weather-get):\n" +
					"one-to-one, and accepted by every API (^[a-zA-Z0-9_-]{1,64}$). mapping[name] is the\n" +
					"capability; an MCP tool also names it in _meta[\"io.github.apysup/capability\"]. A capability\n" +
					"whose input_schema is not an object schema (\"type\": \"object\" at its root, or none) has\n" +
					"no tool: tool_schema_not_object, exit status 2.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "format", Usage: `print {"schema_version", "format", "plan_sha256", "tools": [...], "mapping": {tool: capability}} for anthropic, openai or mcp (docs/manifest.md, "Tools for LLM APIs")`},
				},
				Action: func(c *cli.Context) error {
					format := plan.ToolFormatAnthropic
					if c.IsSet("format") {
						format = plan.ToolFormat(c.String("format"))
					}
					switch format {
					case plan.ToolFormatAnthropic, plan.ToolFormatOpenAI, plan.ToolFormatMCP:
					default:
						return cli.Exit("--format must be anthropic, openai or mcp", 2)
					}
					p, err := sealArg(c)
					if err != nil {
						return err
					}
					set, err := p.ToolSet(format)
					if err != nil {
						return cli.Exit(fmt.Sprintf("%s:\n%v", c.Args().First(), err), 2)
					}
					if c.IsSet("format") {
						return printJSON(c, "apysup.plan_tools.v2", struct {
							Format     plan.ToolFormat   `json:"format"`
							PlanSHA256 string            `json:"plan_sha256"`
							Tools      []json.RawMessage `json:"tools"`
							Mapping    map[string]string `json:"mapping"`
						}{format, p.Identity(), set.Tools, set.Mapping})
					}
					for _, capability := range p.Capabilities() {
						tool, err := plan.ToolName(capability.Name())
						if err != nil {
							return err
						}
						fmt.Fprintf(c.App.Writer, "%-24s %-24s %s\n", tool, capability.Name(), capability.Spec().Description)
					}
					return nil
				},
			},
			{
				Name:      "prelude",
				Usage:     "print the generated Python prelude for a surface",
				ArgsUsage: "MANIFEST",
				Description: "The prelude registers one Python module per projection; every function and alias calls\n" +
					"agent_runtime._capability_call(name, kwargs), and so does every global, which the runner\n" +
					"puts in the script's __main__ (_main_globals). Call ids are capability-<n> on the direct\n" +
					"surface and <parent>:program:<n> on the programmatic and both surfaces.",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "surface", Value: "programmatic", Usage: "direct, programmatic or both"},
					&cli.StringFlag{Name: "parent", Usage: "the parent call id (programmatic and both surfaces)"},
				},
				Action: func(c *cli.Context) error {
					p, err := sealArg(c)
					if err != nil {
						return err
					}
					surface, err := plan.ParseSurface(c.String("surface"))
					if err != nil {
						return cli.Exit(err.Error(), 2)
					}
					pr, err := p.Present(surface, c.String("parent"))
					if err != nil {
						return cli.Exit(err.Error(), 2)
					}
					_, err = c.App.Writer.Write(pr.Prelude)
					return err
				},
			},
		},
	}
}

// sealArg loads and seals the manifest named by the first argument.
func sealArg(c *cli.Context) (*plan.Plan, error) {
	if c.NArg() != 1 {
		return nil, cli.Exit("expected exactly one MANIFEST argument (see --help)", 2)
	}
	return sealManifest(c.Args().First())
}

func sealManifest(path string) (*plan.Plan, error) {
	m, err := plan.LoadManifest(path)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("%s:\n%v", path, err), 2)
	}
	p, err := seal(m)
	if err != nil {
		return nil, cli.Exit(fmt.Sprintf("%s:\n%v", path, err), 2)
	}
	return p, nil
}

// printJSON prints v, a JSON object, indented, with "schema_version":
// schema as its first member: every JSON document the CLI prints names
// its schema, apysup.<thing>.v<n>.
func printJSON(c *cli.Context, schema string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	body := bytes.TrimSpace(buf.Bytes())
	if len(body) < 2 || body[0] != '{' {
		return fmt.Errorf("printJSON: %T is not a JSON object", v)
	}
	doc := []byte(`{"schema_version":` + strconv.Quote(schema))
	if rest := bytes.TrimSpace(body[1:]); rest[0] != '}' {
		doc = append(doc, ',')
	}
	doc = append(doc, body[1:]...)
	var out bytes.Buffer
	if err := json.Indent(&out, doc, "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err := c.App.Writer.Write(out.Bytes())
	return err
}
