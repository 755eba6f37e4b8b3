package earlyclient

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"

	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/serve/sse"
)

// maxScriptBytes is sandbox.MaxScriptBytes (a test keeps them equal): a
// larger script is left to the full client, which refuses it.
const maxScriptBytes = 4 << 20

// SettingEnv names the environment variables that select a run's
// settings or its config file (a test keeps the list whole): any of them
// set leaves the run to the full client.
var SettingEnv = []string{"APYSUP_BACKEND", "APYSUP_SURFACE", "APYSUP_TIMEOUT", "APYSUP_MEMORY",
	"APYSUP_PIDS", "APYSUP_CPUS", "APYSUP_APPROVE", "APYSUP_CONFIG"}

// ConfigSearchPath is the config files `apysup run` reads when neither
// --config nor APYSUP_CONFIG names one: the user's, then the system's.
func ConfigSearchPath() []string {
	home := os.Getenv("XDG_CONFIG_HOME")
	if home == "" {
		if h, err := os.UserHomeDir(); err == nil {
			home = path.Join(h, ".config")
		}
	}
	var out []string
	if home != "" {
		out = append(out, path.Join(home, "apysup", "config.json"))
	}
	return append(out, "/etc/apysup/config.json")
}

// invocation is a command line the early client takes.
type invocation struct {
	addr    string // as given: unix:PATH
	socket  string // PATH
	backend string // as --backend gave it: native, wazero or none
	name    string // the script's name: -c or the file's base name
	source  []byte
	args    []string
}

// parse returns the invocation of args (os.Args) when the early client
// can take it exactly as the full client would, and false otherwise.
func parse(args []string, getenv func(string) string) (*invocation, bool) {
	if len(args) < 3 || args[1] != "run" {
		return nil, false
	}
	for _, name := range SettingEnv {
		if getenv(name) != "" {
			return nil, false
		}
	}
	inv := &invocation{}
	rest := args[2:]
	for len(rest) > 0 && inv.name == "" {
		a := rest[0]
		switch {
		case a == "--server" && len(rest) > 1 && inv.addr == "":
			inv.addr, rest = rest[1], rest[2:]
		case strings.HasPrefix(a, "--server=") && inv.addr == "":
			inv.addr, rest = strings.TrimPrefix(a, "--server="), rest[1:]
		case a == "--backend" && len(rest) > 1 && inv.backend == "" && isBackend(rest[1]):
			inv.backend, rest = rest[1], rest[2:]
		case strings.HasPrefix(a, "--backend=") && inv.backend == "" && isBackend(strings.TrimPrefix(a, "--backend=")):
			inv.backend, rest = strings.TrimPrefix(a, "--backend="), rest[1:]
		case a == "-c" && len(rest) > 1:
			if len(rest[1]) > maxScriptBytes {
				return nil, false
			}
			inv.name, inv.source, rest = "-c", []byte(rest[1]), rest[2:]
		case !strings.HasPrefix(a, "-"):
			st, err := os.Stat(a)
			if err != nil || !st.Mode().IsRegular() || st.Size() > maxScriptBytes {
				return nil, false
			}
			if inv.source, err = os.ReadFile(a); err != nil || len(inv.source) > maxScriptBytes {
				return nil, false
			}
			inv.name, rest = path.Base(a), rest[1:]
		default: // another flag, - (standard input) or --
			return nil, false
		}
	}
	if inv.name == "" {
		return nil, false
	}
	inv.args = rest
	if inv.addr == "" {
		inv.addr = getenv("APYSUP_SERVER")
	}
	socket, ok := strings.CutPrefix(inv.addr, "unix:")
	if !ok || socket == "" {
		return nil, false
	}
	inv.socket = socket
	for _, p := range ConfigSearchPath() {
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			return nil, false
		}
	}
	return inv, true
}

// isBackend: anything else is the full client's usage error.
func isBackend(name string) bool { return name == "native" || name == "wazero" }

// runRequest is the body of POST /v1/runs as the full client builds it
// from the same command line (serve.RunRequest; a test compares them).
type runRequest struct {
	Source     string   `json:"source"`
	Args       []string `json:"args,omitempty"`
	ScriptName string   `json:"script_name,omitempty"`
	Parent     string   `json:"parent,omitempty"`
	Backend    string   `json:"backend,omitempty"`
	Approve    string   `json:"approve,omitempty"`
}

// request is the run's body: the parent call id's default, and the
// approval mode's (prompt on a terminal, which a server cannot do, so
// nothing is sent; deny otherwise).
func (inv *invocation) request(interactive bool) ([]byte, error) {
	req := runRequest{Source: string(inv.source), Args: inv.args, ScriptName: inv.name, Parent: "main", Backend: inv.backend}
	if !interactive {
		req.Approve = "deny"
	}
	return json.Marshal(req)
}

// run runs inv on its server and returns the exit status, or false when
// nothing reached the server (it could not connect), so that the full
// client may try the same run and report it as always.
func (inv *invocation) run(stdin, stdout, stderr *os.File) (int, bool) {
	// A signal cancels the run once the server has it; its result then
	// says how it ended. Notify's first call starts the runtime's signal
	// thread (1-3 ms here), so it runs while the request is built, and
	// is in place before the request is sent.
	signals := make(chan os.Signal, 1)
	notified := make(chan struct{})
	go func() {
		signal.Notify(signals, os.Interrupt, syscall.SIGTERM)
		close(notified)
	}()
	body, err := inv.request(report.IsTerminal(stdin) && report.IsTerminal(stderr))
	<-notified
	if err != nil {
		signal.Stop(signals)
		return 0, false
	}
	// One request: the run's answer is its event stream
	// (POST /v1/runs?wait=events), and the run lives as long as it is read.
	resp, err := open(inv.socket, "POST", "/v1/runs?wait=events", body)
	if err != nil {
		var ns *notSent
		if !errors.As(err, &ns) {
			return inv.fail(stderr, err)
		}
		select {
		case <-signals: // interrupted before anything started
			fmt.Fprintln(stderr, "apysup: interrupted: the run was cancelled")
			return report.ExitKilled, true
		default:
			signal.Stop(signals) // the full client's own handling takes over
			return 0, false
		}
	}
	runID := resp.header["apysup-run-id"]
	if !validRunID(runID) {
		return inv.fail(stderr, fmt.Errorf("the server answered a run id %q", runID))
	}
	// The handler of signals stays to the exit, which follows this
	// function (takeOver): Stop would wait for the runtime's signal thread.
	defer resp.Close()
	ended := make(chan struct{})
	defer close(ended)
	go func() {
		select {
		case <-signals:
			_ = call(inv.socket, "POST", "/v1/runs/"+runID+"/cancel", nil, &struct{}{})
		case <-ended:
		}
	}()
	streams := report.NewStreams(stdout, report.IsTerminal(stdout), stderr, report.IsTerminal(stderr))
	for ev, err := range sse.Read(resp.body) {
		if err != nil {
			return inv.fail(stderr, err)
		}
		switch ev.Name {
		case report.Stdout, report.Stderr:
			var chunk struct{ Data string }
			if json.Unmarshal(ev.Data, &chunk) == nil {
				streams.Output(ev.Name, []byte(chunk.Data))
			}
		case "result":
			res, err := report.FromJSON(ev.Data)
			if err != nil {
				return inv.fail(stderr, err)
			}
			streams.End()
			report.Summary(stdout, res, "")
			return report.ExitStatus(res), true
		}
	}
	return inv.fail(stderr, errors.New("the event stream ended before the result"))
}

// validRunID: a run id is a path segment of letters, digits, - and _.
func validRunID(id string) bool {
	for _, r := range id {
		if !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' || r == '-' || r == '_') {
			return false
		}
	}
	return id != "" && len(id) <= 128
}

// fail reports a failure after the run was sent as the full client does.
func (inv *invocation) fail(stderr io.Writer, err error) (int, bool) {
	var refused *refusal
	if errors.As(err, &refused) {
		fmt.Fprintln(stderr, "apysup:", report.UserMessage(fmt.Sprintf("the server refused the run (%s): %s", refused.Code, refused.Message)))
		return report.ExitRefused, true
	}
	fmt.Fprintln(stderr, "apysup:", report.UserMessage(fmt.Sprintf("server %s: %v", inv.addr, err)))
	return report.ExitSetupFailed, true
}

// takeOver takes the process's run when it can: it runs it and exits
// with its status. Otherwise it returns, and the binary initialises as
// usual.
func takeOver() {
	inv, ok := parse(os.Args, os.Getenv)
	if !ok {
		return
	}
	if code, ran := inv.run(os.Stdin, os.Stdout, os.Stderr); ran {
		os.Exit(code)
	}
}

func init() { takeOver() }
