package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apysup/apysup/cmd/apysup/internal/earlyclient"
	"github.com/apysup/apysup/internal/serve"
)

// cliRun runs this test binary as the apysup command with args, with
// GODEBUG's init trace on so that the caller can tell which client ran:
// the early client ends the process before the JSON Schema library
// initialises. It returns stdout, stderr without the trace, the exit
// status and whether the early client ran.
func cliRun(t *testing.T, env []string, args ...string) (stdout, stderr string, code int, early bool) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, args...)
	cmd.Env = append(append(os.Environ(), cliEnv+"=1", "GODEBUG=inittrace=1"), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var kept []string
	early = true
	for _, line := range strings.SplitAfter(errOut.String(), "\n") {
		switch {
		case strings.HasPrefix(line, "init github.com/santhosh-tekuri/jsonschema/"):
			early = false
		case strings.HasPrefix(line, "init "):
		default:
			kept = append(kept, line)
		}
	}
	return out.String(), strings.Join(kept, ""), code, early
}

// noConfig keeps the user's and the system's config files out of a test.
func noConfig(t *testing.T) []string {
	if _, err := os.Stat("/etc/apysup/config.json"); err == nil {
		t.Fatal("/etc/apysup/config.json exists: every run --server takes the full client")
	}
	return []string{"XDG_CONFIG_HOME=" + t.TempDir()}
}

// TestEarlyClientSendsTheSameRequest: for the command lines the early
// client takes, it sends the server the request the full client sends
// (the full client forced by --parent main, its default, which changes
// nothing in the request), and takes nothing else.
func TestEarlyClientSendsTheSameRequest(t *testing.T) {
	for _, name := range settings {
		if !slices.Contains(earlyclient.SettingEnv, name.env) {
			t.Errorf("earlyclient.SettingEnv lacks %s", name.env)
		}
	}
	if !slices.Contains(earlyclient.SettingEnv, "APYSUP_CONFIG") {
		t.Error("earlyclient.SettingEnv lacks APYSUP_CONFIG")
	}
	socket := filepath.Join(shortTempDir(t), "api.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	bodies := make(chan []byte, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		bodies <- body
		if r.URL.Query().Get("wait") != "events" {
			t.Errorf("POST %s", r.URL)
		}
		w.Header().Set(serve.RunIDHeader, "r1")
		io.WriteString(w, "event: stdout\ndata: {\"data\":\"out\\n\"}\n\nevent: result\ndata: {\"status\":\"error\",\"exit_code\":4,"+
			"\"backend\":\"native\",\"backend_source\":\"default\",\"plan_sha256\":\"sha256:1\",\"receipts\":[],\"timings\":{\"total_ms\":3}}\n\n")
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()
	script := filepath.Join(t.TempDir(), "tool.py")
	os.WriteFile(script, []byte("print(1)\n"), 0o600)
	env := noConfig(t)
	for _, args := range [][]string{
		{"-c", "import sys; print(sys.argv)", "a", "--json"},
		{script, "-c", "b"},
		{"--backend", "wazero", "-c", "pass"},
		{"--backend=native", "-c", "pass"},
	} {
		var got [2]serve.RunRequest
		var outs [2]string
		for i, extra := range [][]string{nil, {"--parent", "main"}} {
			stdout, stderr, code, early := cliRun(t, env, append(append([]string{"run", "--server", "unix:" + socket}, extra...), args...)...)
			if early != (i == 0) || code != 4 {
				t.Fatalf("%q %q: early client %v, exit %d (%s)", extra, args, early, code, stderr)
			}
			if err := json.Unmarshal(<-bodies, &got[i]); err != nil {
				t.Fatal(err)
			}
			outs[i] = stdout + stderr
		}
		if !reflect.DeepEqual(got[0], got[1]) || outs[0] != outs[1] {
			t.Errorf("%q:\nearly %+v %q\nfull  %+v %q", args, got[0], outs[0], got[1], outs[1])
		}
	}
	// Settings from the environment go to the full client.
	if _, stderr, _, early := cliRun(t, append(env, "APYSUP_TIMEOUT=5s"), "run", "--server", "unix:"+socket, "-c", "pass"); early {
		t.Errorf("APYSUP_TIMEOUT: the early client ran (%s)", stderr)
	}
	<-bodies
	// A server that is not there: the full client says so, as always.
	_, stderr, code, _ := cliRun(t, env, "run", "--server", "unix:"+socket+".none", "-c", "pass")
	if code != ExitSetupFailed || !strings.Contains(stderr, "server unix:"+socket+".none: ") {
		t.Errorf("no server: exit %d %s", code, stderr)
	}
}

// timingLines are the summary's lines that differ between two runs of
// the same script.
var timingLines = regexp.MustCompile(`(?m)^(status .*), \d+ ms,|^usage .*\n`)

// TestEarlyClientIsTheFullClient: against a real server, the early client
// prints what the full client prints and exits with the same status:
// streamed output, the summary, a traceback, a guest's exit status.
func TestEarlyClientIsTheFullClient(t *testing.T) {
	_, socket, _ := startServe(t)
	script := filepath.Join(t.TempDir(), "tool.py")
	os.WriteFile(script, []byte("import sys\nprint('args', sys.argv, __file__)\nsys.stderr.write('to stderr\\n')\nsys.exit(int(sys.argv[1]))\n"), 0o600)
	env := noConfig(t)
	for _, args := range [][]string{
		{"-c", "print('hello'); print('é\\x1b[31m', end='')"},
		{"-c", "import sys\nprint('x', sys.argv)\nsys.exit(3)", "a"},
		{"-c", "def f():\n    raise ValueError('boom')\nf()"},
		{script, "5"},
	} {
		var outs [2]string
		var codes [2]int
		for i, extra := range [][]string{nil, {"--parent", "main"}} {
			stdout, stderr, code, early := cliRun(t, env, append(append([]string{"run", "--server", "unix:" + socket}, extra...), args...)...)
			if early != (i == 0) {
				t.Fatalf("%q %q: early client %v", extra, args, early)
			}
			outs[i], codes[i] = timingLines.ReplaceAllString(stdout, "$1,")+"\n"+stderr, code
		}
		if outs[0] != outs[1] || codes[0] != codes[1] {
			t.Errorf("%q:\nearly exit %d\n%s\nfull exit %d\n%s", args, codes[0], outs[0], codes[1], outs[1])
		}
	}
}

// TestKilledClientLeavesNoRun: both clients stream their run as its own
// request (POST /v1/runs?wait=events), so a client killed with SIGKILL,
// which cancels nothing itself, leaves no run going on the server.
func TestKilledClientLeavesNoRun(t *testing.T) {
	_, socket, _ := startServe(t)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	for _, extra := range [][]string{nil, {"--parent", "main"}} {
		args := append(append([]string{"run", "--server", "unix:" + socket}, extra...), "-c", "import time\nprint('up', flush=True)\ntime.sleep(300)")
		cmd := exec.Command(self, args...)
		cmd.Env = append(append(os.Environ(), cliEnv+"=1"), noConfig(t)...)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		line, _ := bufio.NewReader(out).ReadString('\n')
		if line != "up\n" {
			t.Fatalf("%q: %q", extra, line)
		}
		cmd.Process.Kill()
		cmd.Wait()
		deadline := time.Now().Add(10 * time.Second) // the run's own timeout is 30 s
		for {
			resp, err := hc.Get("http://apysup/v1/health")
			if err != nil {
				t.Fatal(err)
			}
			var h serve.Health
			json.NewDecoder(resp.Body).Decode(&h)
			resp.Body.Close()
			if h.Running+h.Queued == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%q: %d runs still running 10 s after their client was killed", extra, h.Running+h.Queued)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
