package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/sandbox/doctor"
	"github.com/apysup/apysup/internal/sandbox/native"
)

func doctorCommand() *cli.Command {
	return &cli.Command{
		Name:  "doctor",
		Usage: "check every kernel and host feature the native backend needs",
		Description: "Each check prints ok or a typed reason (userns_unavailable, seccomp_unavailable,\n" +
			"cgroup_unavailable, python_missing, ...) with a one-line fix. `apysup run` refuses with the same\n" +
			"reason and never falls back to weaker confinement. Exit status 1 when a required check fails.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"}},
		Action: func(c *cli.Context) error {
			r := doctor.Run(c.Context)
			if c.Bool("json") {
				if err := printJSON(c, "apysup.doctor.v1", r); err != nil {
					return err
				}
			} else {
				for _, ch := range r.Checks {
					mark := "ok  "
					if !ch.OK() {
						mark = "FAIL"
						if !ch.Required {
							mark = "warn"
						}
					}
					fmt.Fprintf(c.App.Writer, "%s %-22s %s\n", mark, ch.Name, report.UserMessage(ch.Detail))
					if !ch.OK() {
						fmt.Fprintf(c.App.Writer, "     %-22s %s; fix: %s\n", "", ch.Status, ch.Fix)
					}
				}
			}
			if !r.OK {
				return cli.Exit("", 1)
			}
			return nil
		},
	}
}

func seccompCommand() *cli.Command {
	return &cli.Command{
		Name:  "seccomp",
		Usage: "show the syscall policy guests run under",
		Subcommands: []*cli.Command{{
			Name:  "export",
			Usage: "print the seccomp allowlist as an OCI/Docker seccomp profile (JSON), to read and diff",
			Action: func(c *cli.Context) error {
				out, err := native.SeccompProfile()
				if err != nil {
					return err
				}
				_, err = c.App.Writer.Write(append(out, '\n'))
				return err
			},
		}},
	}
}
