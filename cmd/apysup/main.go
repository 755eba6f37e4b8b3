package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/sandbox/native"
)

func main() {
	native.MaybeInit() // libcontainer re-executes this binary as the container's init
	if err := runApp(newApp(os.Stdout, os.Stderr), os.Args); err != nil {
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

// exitCode maps an error to the process exit status; cli.ExitCoder wins.
func exitCode(err error) int {
	if ec, ok := err.(cli.ExitCoder); ok {
		return ec.ExitCode()
	}
	return 1
}

func newApp(stdout, stderr io.Writer) *cli.App {
	return &cli.App{
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
		Commands:       []*cli.Command{runCommand(), planCommand(), doctorCommand(), seccompCommand(), receiptsCommand(), eventsCommand(), configCommand(), approvalsCommand()},
	}
}
