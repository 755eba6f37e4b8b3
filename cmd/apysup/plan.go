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
				Usage:     "print the tool schemas (name, description, input_schema) LLM tool-use APIs take",
				ArgsUsage: "MANIFEST",
				Description: "Lists each tool's name and description; --json prints the document whose tools array\n" +
					"is what a tool-use API takes (`apysup plan tools --json MANIFEST | jq .tools`).",
				Flags: []cli.Flag{
					&cli.BoolFlag{Name: "json", Usage: `print {"schema_version", "plan_sha256", "tools": [{name, description, input_schema}...]}`},
				},
				Action: func(c *cli.Context) error {
					p, err := sealArg(c)
					if err != nil {
						return err
					}
					tools := p.ToolSchemas()
					if c.Bool("json") {
						return printJSON(c, "apysup.plan_tools.v1", struct {
							PlanSHA256 string            `json:"plan_sha256"`
							Tools      []plan.ToolSchema `json:"tools"`
						}{p.Identity(), tools})
					}
					for _, t := range tools {
						fmt.Fprintf(c.App.Writer, "%-24s %s\n", t.Name, t.Description)
					}
					return nil
				},
			},
			{
				Name:      "prelude",
				Usage:     "print the generated Python prelude for a surface",
				ArgsUsage: "MANIFEST",
				Description: "The prelude registers one Python module per projection; every function and alias calls\n" +
					"agent_runtime._capability_call(name, kwargs). Call ids are capability-<n> on the direct\n" +
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
	p, err := m.Seal()
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
