package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	_ "github.com/apysup/apysup/cmd/apysup/internal/earlyclient" // runs a plain run --server unix:PATH before the rest initialises (see the package)
	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/sandbox/native"
	_ "github.com/apysup/apysup/internal/sandbox/native/mainthread" // the main goroutine keeps the main thread (see the package)
)

func main() {
	native.MaybeInit() // libcontainer re-executes this binary as the container's init
	err := runApp(newApp(os.Stdout, os.Stderr), os.Args)
	if sawBrokenPipe.saw() {
		// The run is torn down: end as a writer whose reader left does.
		sawBrokenPipe.die()
	}
	if err != nil {
		if msg := err.Error(); msg != "" { // an exit status alone has already said everything
			fmt.Fprintln(os.Stderr, "apysup:", msg)
		}
		os.Exit(exitCode(err))
	}
}

// runApp runs the command line args, whose flags may follow positional
// arguments where that is unambiguous (permuteArgs).
func runApp(app *cli.App, args []string) error {
	return app.Run(permuteArgs(app, args))
}

// exitCode maps an error to the process exit status. Every action's error
// carries its status (refuseMisuse); any other is cli's own refusal of
// the command line (a missing required flag), a usage error.
func exitCode(err error) int {
	if ec, ok := err.(cli.ExitCoder); ok {
		return ec.ExitCode()
	}
	return ExitUsage
}

func newApp(stdout, stderr io.Writer) *cli.App {
	app := &cli.App{
		Name:  "apysup",
		Usage: "run untrusted, agent-written Python under a sealed capability Plan",
		Description: "apysup confines real CPython (Debian's python3.11) with namespaces, seccomp, cgroups and\n" +
			"rlimits, with no network and a read-only root. The guest's only door out is a credentialed\n" +
			"channel to the Broker, which enforces the sealed Plan and writes host-authored receipts.\n\n" +
			"A command's flags may also follow its arguments (`apysup plan seal MANIFEST --json`), except\n" +
			"run's: everything after run's SCRIPT is the script's. `--` ends the flags.",
		Writer:          stdout,
		ErrWriter:       stderr,
		HideHelpCommand: true,
		// main decides the exit status; the library must not call os.Exit.
		ExitErrHandler: func(*cli.Context, error) {},
		Commands:       []*cli.Command{runCommand(), serveCommand(), planCommand(), doctorCommand(), seccompCommand(), receiptsCommand(), eventsCommand(), journalCommand(), grantsCommand(), configCommand(), approvalsCommand(), versionCommand()},
	}
	app.Version = versionString() // --version prints "apysup version " and this, as `apysup version` does
	app.OnUsageError = usageError
	app.Action = commandGroup
	for _, c := range app.Commands {
		refuseMisuse(c)
	}
	return app
}

// ExitUsage is the exit status of a command line apysup cannot run: an
// unknown command or flag, a missing flag or argument, a script that does
// not exist. Nothing has started when it is returned.
const ExitUsage = 2

func usageError(_ *cli.Context, err error, _ bool) error {
	return cli.Exit(err.Error()+" (see --help)", ExitUsage)
}

// refuseMisuse makes every misuse of cmd and its subcommands a usage
// error: a bad flag, an unknown subcommand, an argument to a command that
// takes none. An error an action returns without a status exits 1.
func refuseMisuse(cmd *cli.Command) {
	if cmd.OnUsageError == nil {
		cmd.OnUsageError = usageError
	}
	if len(cmd.Subcommands) > 0 {
		cmd.Action = commandGroup
		for _, sub := range cmd.Subcommands {
			refuseMisuse(sub)
		}
		return
	}
	action := cmd.Action
	cmd.Action = func(c *cli.Context) error {
		if cmd.ArgsUsage == "" && c.NArg() > 0 {
			return cli.Exit(fmt.Sprintf("unexpected argument %q (see --help)", c.Args().First()), ExitUsage)
		}
		err := action(c)
		if err == nil {
			return nil
		}
		status := 1
		if ec, ok := err.(cli.ExitCoder); ok {
			status = ec.ExitCode()
		}
		return cli.Exit(report.UserMessage(err.Error()), status)
	}
}

// commandGroup is the action of the app and of a command with
// subcommands: help without an argument, else an unknown command.
func commandGroup(c *cli.Context) error {
	if c.NArg() > 0 {
		return cli.Exit(fmt.Sprintf("unknown command %q (see --help)", c.Args().First()), ExitUsage)
	}
	return cli.ShowSubcommandHelp(c)
}
