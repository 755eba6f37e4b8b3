package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/plan"
)

func grantsCommand() *cli.Command {
	return &cli.Command{
		Name:  "grants",
		Usage: "revoke a capability's grant at the provider that commits its effects",
		Subcommands: []*cli.Command{{
			Name:  "revoke",
			Usage: "revoke the grant of --capability at its provider and print the policy order receipt's digest",
			Description: "Builds the capability's handler from the manifest, as a run would, and asks it to revoke\n" +
				"the capability's grant (its policy_sha256) in the same order as the effects it accepts\n" +
				"(docs/acceptance.md): a call it accepts after the revocation is rejected\n" +
				"(provider_rejected), one it accepted before stays accepted. Only a provider can revoke\n" +
				"(a kv handler with \"acceptance\": \"strict\"; an exec provider that supports it): any other\n" +
				"handler is grant_not_revocable. Revoking twice prints the first revocation's receipt.\n" +
				"Exit status 1 with the code (unknown_capability, grant_not_revocable, revocation_failed);\n" +
				"2 for a manifest that does not seal or build.",
			Flags: []cli.Flag{
				&cli.StringFlag{Name: "plan", Usage: "the manifest `FILE` (required)"},
				&cli.StringFlag{Name: "capability", Usage: "the capability `NAME` whose grant is revoked (required)"},
				&cli.BoolFlag{Name: "json", Usage: `print {"schema_version", "capability", "policy_sha256", "policy_order_receipt_sha256"}`},
			},
			Action: revokeGrant,
		}},
	}
}

func revokeGrant(c *cli.Context) error {
	if c.NArg() != 0 {
		return cli.Exit("grants revoke takes no arguments (see --help)", ExitUsage)
	}
	path, name := c.String("plan"), c.String("capability")
	if path == "" || name == "" {
		return cli.Exit("--plan FILE and --capability NAME are required (see --help)", ExitUsage)
	}
	m, err := plan.LoadManifest(path)
	if err != nil {
		return cli.Exit(fmt.Sprintf("%s:\n%v", path, err), 2)
	}
	p, err := seal(m)
	if err != nil {
		return cli.Exit(fmt.Sprintf("%s:\n%v", path, err), 2)
	}
	hs, closer, err := buildHandlers(m)
	if err != nil {
		return cli.Exit(fmt.Sprintf("%s:\n%v", path, err), 2)
	}
	defer closer.Close()
	rev, err := broker.RevokeGrant(c.Context, p, hs, name)
	if err != nil {
		return cli.Exit(err.Error(), 1)
	}
	if c.Bool("json") {
		return printJSON(c, "apysup.grant_revocation.v1", rev)
	}
	fmt.Fprintln(c.App.Writer, rev.PolicyOrderReceiptSHA256)
	return nil
}
