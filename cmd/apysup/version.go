package main

import (
	"fmt"
	"runtime/debug"

	"github.com/urfave/cli/v2"
)

// Set at link time (the Makefile does: -X main.version=... -X
// main.commit=...); when empty, the build information the go command
// stamps into the binary is used.
var (
	version string
	commit  string
)

// buildVersion is the version and commit this binary was built from.
func buildVersion() (ver, rev string) {
	ver, rev = version, commit
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return or(ver, "unknown"), or(rev, "unknown")
	}
	if ver == "" {
		ver = info.Main.Version // "(devel)" for a build from a work tree
	}
	if rev == "" {
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" && modified {
			rev += "+modified"
		}
	}
	return or(ver, "unknown"), or(rev, "unknown")
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// versionString follows "apysup version " in what `apysup version` and
// `apysup --version` print.
func versionString() string {
	ver, rev := buildVersion()
	return fmt.Sprintf("%s, commit %s", ver, rev)
}

func versionCommand() *cli.Command {
	return &cli.Command{
		Name:  "version",
		Usage: "print the version and the commit apysup was built from",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON"}},
		Action: func(c *cli.Context) error {
			if c.Bool("json") {
				ver, rev := buildVersion()
				return printJSON(c, "apysup.version.v1", map[string]string{"version": ver, "commit": rev})
			}
			fmt.Fprintf(c.App.Writer, "%s version %s\n", c.App.Name, versionString())
			return nil
		},
	}
}
