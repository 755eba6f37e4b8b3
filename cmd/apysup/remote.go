package main

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/serve"
)

// serverFlag sends the run to an `apysup serve` instead of running it here.
var serverFlag = &cli.StringFlag{Name: "server", EnvVars: []string{"APYSUP_SERVER"},
	Usage: "run on the server at `ADDR` (unix:PATH or http://HOST:PORT; APYSUP_SERVER): the same flags, RunResult and exit status; " +
		"--approve is deny or auto there, the token of a TCP server comes from APYSUP_TOKEN"}

// runRemote is `apysup run --server`: the request is built from the same
// flags and selection, and the answer printed and mapped to the exit
// status as a local run's.
func runRemote(c *cli.Context, addr, scriptPath string, args []string, sel *selection) error {
	source, err := os.ReadFile(scriptPath)
	if err != nil || len(source) > sandbox.MaxScriptBytes {
		return cli.Exit(fmt.Sprintf("script %s: not readable or larger than %d bytes", scriptPath, sandbox.MaxScriptBytes), ExitUsage)
	}
	// Named as a local run names it: the file's name, -c or -.
	req := serve.RunRequest{Source: string(source), ScriptName: filepath.Base(scriptPath), Args: args,
		Parent: c.String("parent"), Export: c.IsSet("export")}
	if p := c.String("plan"); p != "" {
		if req.Manifest, err = os.ReadFile(p); err != nil {
			return cli.Exit(err.Error(), ExitUsage)
		}
	}
	if sel.sources["backend"] != SourceDefault {
		req.Backend = sel.values["backend"]
	}
	if sel.sources["surface"] != SourceDefault {
		req.Surface = sel.values["surface"]
	}
	switch approve := sel.values["approve"]; {
	case approve == approveDeny || approve == approveAuto:
		req.Approve = approve
	case sel.sources["approve"] != SourceDefault:
		return cli.Exit("--approve "+approve+": a run on a server is decided by deny, auto, or its API (docs/api.md)", ExitUsage)
	}
	if req.Limits, err = remoteLimits(sel); err != nil {
		return cli.Exit(err.Error(), ExitUsage)
	}
	if dir := c.String("workspace"); dir != "" {
		if req.WorkspaceTar, err = packWorkspace(dir); err != nil {
			return cli.Exit(fmt.Sprintf("--workspace %s: %v", dir, err), ExitUsage)
		}
	}
	export := c.String("export")
	if export != "" {
		if _, err := os.Lstat(export); err == nil {
			return cli.Exit(fmt.Sprintf("--export %s: exists", export), ExitUsage)
		}
	}
	client, err := serve.NewClient(addr, os.Getenv("APYSUP_TOKEN"))
	if err != nil {
		return cli.Exit(err.Error(), ExitUsage)
	}
	defer client.Close()
	ctx, stop := signal.NotifyContext(c.Context, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Interrupted, the run is cancelled: the request ends (--json), or
	// the stream's reader cancels it.
	var res *serve.RunResult
	var streams *report.Streams
	if c.Bool("json") {
		res, err = client.Run(ctx, req)
	} else {
		streams = report.NewStreams(c.App.Writer, report.IsTerminal(c.App.Writer), c.App.ErrWriter, report.IsTerminal(c.App.ErrWriter))
		res, err = streamRemote(ctx, client, req, streams)
	}
	var refused *serve.Error
	switch {
	case errors.As(err, &refused):
		return cli.Exit(fmt.Sprintf("the server refused the run (%s): %s", refused.Code, refused.Message), ExitRefused)
	case errors.Is(err, context.Canceled):
		return cli.Exit("interrupted: the run was cancelled", ExitKilled)
	case err != nil:
		return cli.Exit(fmt.Sprintf("server %s: %v", addr, err), ExitSetupFailed)
	}
	if export != "" && res.Workspace != nil && res.Workspace.Disposition == "exported" {
		if err := writeExport(export, res.Exported); err != nil {
			res.Workspace.Disposition, res.Workspace.ErrorCode = "discarded", supervisor.CodeExportFailed
		}
	}
	return reportRun(c, &res.Result, streams)
}

// streamRemote starts the run, passes its stdout and stderr events to the
// user's streams as they come, and returns its result event. Interrupted,
// it cancels the run.
func streamRemote(ctx context.Context, client *serve.Client, req serve.RunRequest, streams *report.Streams) (*serve.RunResult, error) {
	id, events, err := client.Stream(context.WithoutCancel(ctx), req)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { _ = client.Cancel(context.Background(), id) })
	defer stop()
	for ev, err := range events {
		if err != nil {
			return nil, err
		}
		switch ev.Name {
		case serve.EventStdout, serve.EventStderr:
			var chunk struct{ Data string }
			if json.Unmarshal(ev.Data, &chunk) == nil {
				streams.Output(ev.Name, []byte(chunk.Data))
			}
		case serve.EventResult:
			var res serve.RunResult
			if err := json.Unmarshal(ev.Data, &res); err != nil {
				return nil, err
			}
			return &res, nil // cancelled or not: the result says how it ended
		}
	}
	return nil, errors.New("the event stream ended before the result")
}

// remoteLimits are the limits selected by a flag, the environment or the
// config file (the server applies its defaults to the rest).
func remoteLimits(sel *selection) (serve.RunLimits, error) {
	var l serve.RunLimits
	set := func(name string) bool { return sel.sources[name] != SourceDefault }
	if set("timeout") {
		d, err := parseDuration(sel.values["timeout"])
		if err != nil {
			return l, err
		}
		l.TimeoutMs = d.Milliseconds()
	}
	var err error
	if set("memory") {
		if l.MemoryBytes, err = parseBytes(sel.values["memory"]); err != nil {
			return l, err
		}
	}
	if set("pids") {
		if l.Pids, err = parsePositive(sel.values["pids"]); err != nil {
			return l, err
		}
	}
	if set("cpus") {
		if l.CPUs, err = parseCPUs(sel.values["cpus"]); err != nil {
			return l, err
		}
	}
	return l, nil
}

// packWorkspace packs a directory of regular files and directories into
// an uncompressed tar (POST /v1/runs's workspace_tar), with their
// permission bits, within the bounds of a request: the server copies it
// into the run's workspace as a local run copies the directory.
func packWorkspace(dir string) ([]byte, error) {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	entries := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hdr := &tar.Header{Name: filepath.ToSlash(rel), Mode: int64(info.Mode().Perm())}
		switch {
		case d.IsDir():
			hdr.Typeflag, hdr.Name = tar.TypeDir, hdr.Name+"/"
		case d.Type().IsRegular():
			hdr.Typeflag, hdr.Size = tar.TypeReg, info.Size()
		default:
			return fmt.Errorf("%s: only regular files and directories are sent", p)
		}
		if entries++; entries > serve.MaxWorkspaceFiles || int64(buf.Len())+hdr.Size > serve.MaxRequestBytes*3/4 {
			return fmt.Errorf("larger than a request may carry (%d entries, %d bytes)", serve.MaxWorkspaceFiles, serve.MaxRequestBytes*3/4)
		}
		if err := tw.WriteHeader(hdr); err != nil || hdr.Typeflag == tar.TypeDir {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		_, err = io.CopyN(tw, f, hdr.Size) // the size it had when listed (shorter: an error)
		return err
	})
	if err != nil {
		return nil, err
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeExport publishes the exported file map to dir, which must not
// exist.
func writeExport(dir string, files map[string][]byte) error {
	if err := os.Mkdir(dir, 0o700); err != nil {
		return err
	}
	for rel, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("export path %q is not local", rel)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			return err
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}
