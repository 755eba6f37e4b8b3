package main

import (
	"strings"

	"github.com/urfave/cli/v2"
)

// permuteArgs lets flags follow positional arguments where that is
// unambiguous: urfave/cli stops parsing flags at the first positional, so
// for every command except run the leaf command's flags are moved before
// its positionals (`plan seal MANIFEST --json` reads as `plan seal --json
// MANIFEST`). A flag's value stays with its flag, and everything after
// `--` stays positional.
//
// run is the exception: everything after SCRIPT is the script's (`apysup
// run s.py --json` passes --json to s.py), and, as with `python -c`, so is
// everything after `-c CODE`.
func permuteArgs(app *cli.App, args []string) []string {
	if len(args) < 2 {
		return args
	}
	out := []string{args[0]}
	commands := app.Commands
	i := 1
	var leaf *cli.Command
	for ; i < len(args) && leaf == nil; i++ {
		a := args[i]
		out = append(out, a)
		if a == "--" {
			return append(out, args[i+1:]...)
		}
		if strings.HasPrefix(a, "-") {
			continue // the app's own flags (--help, --version) take no value
		}
		cmd := findCommand(commands, a)
		switch {
		case cmd == nil:
			return append(out, args[i+1:]...) // not ours to judge: cli reports it
		case len(cmd.Subcommands) == 0:
			leaf = cmd
		default:
			commands = cmd.Subcommands
		}
	}
	rest := args[i:]
	if leaf == nil || leaf.SkipFlagParsing {
		return append(out, rest...)
	}
	if leaf.Name == "run" {
		return append(out, runArgs(leaf, rest)...)
	}
	var flags, positional []string
	dashes := false
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		switch {
		case a == "--":
			dashes = true
			positional = append(positional, rest[j+1:]...)
			j = len(rest)
		case isFlag(a):
			flags = append(flags, a)
			if takesValue(leaf, a) && j+1 < len(rest) {
				j++
				flags = append(flags, rest[j])
			}
		default:
			positional = append(positional, a)
		}
	}
	out = append(out, flags...)
	if dashes { // every positional after it, so none reads as a flag
		out = append(out, "--")
	}
	return append(out, positional...)
}

// runArgs keeps run's command line as it is, except that the code of
// `-c CODE` ends run's own flags, as it does python's: `--` is inserted
// after it so that what follows is the code's argv.
func runArgs(run *cli.Command, rest []string) []string {
	for j := 0; j < len(rest); j++ {
		a := rest[j]
		if a == "--" || !isFlag(a) {
			return rest // SCRIPT (or -): the rest is the script's
		}
		if a == "-c" || a == "--c" {
			if j+1 >= len(rest) {
				return rest // cli reports the missing value
			}
			out := append([]string{}, rest[:j+2]...)
			out = append(out, "--")
			return append(out, rest[j+2:]...)
		}
		if strings.HasPrefix(a, "-c=") || strings.HasPrefix(a, "--c=") {
			out := append([]string{}, rest[:j+1]...)
			out = append(out, "--")
			return append(out, rest[j+1:]...)
		}
		if takesValue(run, a) {
			j++
		}
	}
	return rest
}

// isFlag: "-" alone is a positional (standard input), as for the flag package.
func isFlag(a string) bool { return len(a) > 1 && a[0] == '-' }

// takesValue reports whether the flag token a names a flag of cmd that
// takes its value from the next argument (not a bool, no "=value").
func takesValue(cmd *cli.Command, a string) bool {
	name := strings.TrimLeft(a, "-")
	if strings.Contains(name, "=") {
		return false
	}
	for _, f := range cmd.Flags {
		for _, n := range f.Names() {
			if n != name {
				continue
			}
			tv, ok := f.(interface{ TakesValue() bool })
			return !ok || tv.TakesValue()
		}
	}
	return false
}

func findCommand(commands []*cli.Command, name string) *cli.Command {
	for _, c := range commands {
		if c.HasName(name) {
			return c
		}
	}
	return nil
}
