package earlyclient

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/sandbox"
)

// TestMaxScriptBytes: the early client leaves to the full client exactly
// the scripts the full client refuses for their size.
func TestMaxScriptBytes(t *testing.T) {
	if maxScriptBytes != sandbox.MaxScriptBytes {
		t.Fatalf("maxScriptBytes %d, sandbox.MaxScriptBytes %d", maxScriptBytes, sandbox.MaxScriptBytes)
	}
}

// TestParse: the early client takes the plainest command lines and
// leaves every other to the full client.
func TestParse(t *testing.T) {
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	t.Setenv("HOME", t.TempDir())
	dir := t.TempDir()
	script := filepath.Join(dir, "tool.py")
	os.WriteFile(script, []byte("print(1)\n"), 0o600)
	big := filepath.Join(dir, "big.py")
	os.WriteFile(big, make([]byte, maxScriptBytes+1), 0o600)
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	take := []struct {
		args []string
		env  map[string]string
		want invocation
	}{
		{[]string{"--server", "unix:/s", "-c", "pass"}, nil, invocation{addr: "unix:/s", socket: "/s", name: "-c", source: []byte("pass")}},
		{[]string{"--server=unix:/s", "-c", "pass", "a", "--json"}, nil, invocation{addr: "unix:/s", socket: "/s", name: "-c", source: []byte("pass"), args: []string{"a", "--json"}}},
		{[]string{"-c", "pass"}, map[string]string{"APYSUP_SERVER": "unix:/e"}, invocation{addr: "unix:/e", socket: "/e", name: "-c", source: []byte("pass")}},
		{[]string{"--server", "unix:/s", "-c", "pass"}, map[string]string{"APYSUP_SERVER": "http://x:1"}, invocation{addr: "unix:/s", socket: "/s", name: "-c", source: []byte("pass")}},
		{[]string{"--server", "unix:/s", script, "-c", "x"}, nil, invocation{addr: "unix:/s", socket: "/s", name: "tool.py", source: []byte("print(1)\n"), args: []string{"-c", "x"}}},
		{[]string{"--server", "unix:/s", "-c", "-x"}, map[string]string{"APYSUP_TOKEN": "t", "APYSUP_REQUIRE_ALL": "1"}, invocation{addr: "unix:/s", socket: "/s", name: "-c", source: []byte("-x")}},
		{[]string{"--backend", "wazero", "--server", "unix:/s", "-c", "p"}, nil, invocation{addr: "unix:/s", socket: "/s", backend: "wazero", name: "-c", source: []byte("p")}},
		{[]string{"--server", "unix:/s", "--backend=native", "-c", "p"}, nil, invocation{addr: "unix:/s", socket: "/s", backend: "native", name: "-c", source: []byte("p")}},
	}
	for _, tc := range take {
		env = tc.env
		got, ok := parse(append([]string{"apysup", "run"}, tc.args...), getenv)
		if !ok || fmt.Sprintf("%+v", *got) != fmt.Sprintf("%+v", tc.want) {
			t.Errorf("%q: got %+v %v, want %+v", tc.args, got, ok, tc.want)
		}
	}
	leave := []struct {
		args []string
		env  map[string]string
	}{
		{[]string{"-c", "pass"}, nil},                                   // no server
		{[]string{"--server", "http://127.0.0.1:1", "-c", "pass"}, nil}, // TCP: a token, TLS
		{[]string{"--server", "unix:", "-c", "pass"}, nil},              // no path
		{[]string{"--server", "unix:/s", "--json", "-c", "pass"}, nil},  // any other flag
		{[]string{"--server", "unix:/s", "--timeout", "1s", "-c", "p"}, nil},
		{[]string{"--server", "unix:/s", "-c=pass"}, nil},                      // not the plainest form
		{[]string{"--server", "unix:/s", "--backend", "qemu", "-c", "p"}, nil}, // the full client's usage error
		{[]string{"--server", "unix:/s", "--backend", "", "-c", "p"}, nil},
		{[]string{"--server", "unix:/s", "--backend", "wazero", "--backend", "native", "-c", "p"}, nil},
		{[]string{"--server", "unix:/s", "--server", "unix:/t", "-c", "p"}, nil},
		{[]string{"--server", "unix:/s", "-", "a"}, nil}, // standard input: read once
		{[]string{"--server", "unix:/s", "--", script}, nil},
		{[]string{"--server", "unix:/s"}, nil}, // no script
		{[]string{"--server", "unix:/s", "-c"}, nil},
		{[]string{"--server", "unix:/s", filepath.Join(dir, "none.py")}, nil}, // the full client reports it
		{[]string{"--server", "unix:/s", dir}, nil},
		{[]string{"--server", "unix:/s", big}, nil},
		{[]string{"--server", "unix:/s", "-c", string(make([]byte, maxScriptBytes+1))}, nil},
	}
	for _, name := range SettingEnv {
		leave = append(leave, struct {
			args []string
			env  map[string]string
		}{[]string{"--server", "unix:/s", "-c", "pass"}, map[string]string{name: "x"}})
	}
	for _, tc := range leave {
		env = tc.env
		if got, ok := parse(append([]string{"apysup", "run"}, tc.args...), getenv); ok {
			t.Errorf("%.60q %v: taken as %+v", tc.args, tc.env, got)
		}
	}
	env = nil
	for _, args := range [][]string{{"apysup"}, {"apysup", "run"}, {"apysup", "serve", "--server", "unix:/s", "-c", "p"}, {"apysup", "--help", "run"}} {
		if _, ok := parse(args, getenv); ok {
			t.Errorf("%q: taken", args)
		}
	}
	// A config file anywhere on the search path may select settings.
	for _, p := range ConfigSearchPath()[:1] {
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("{}"), 0o600)
		if _, ok := parse([]string{"apysup", "run", "--server", "unix:/s", "-c", "p"}, getenv); ok {
			t.Errorf("taken with %s", p)
		}
		os.Remove(p)
	}
}

// TestRequest: the body the full client sends for the same command line
// (serve.RunRequest: the parent call id's default; deny unless a person
// could be prompted, which a server cannot do).
func TestRequest(t *testing.T) {
	inv := &invocation{name: "-c", source: []byte("print(1)"), args: []string{"a"}}
	for interactive, want := range map[bool]string{
		false: `{"source":"print(1)","args":["a"],"script_name":"-c","parent":"main","approve":"deny"}`,
		true:  `{"source":"print(1)","args":["a"],"script_name":"-c","parent":"main"}`,
	} {
		if got, err := inv.request(interactive); err != nil || string(got) != want {
			t.Errorf("interactive %v: %s %v, want %s", interactive, got, err, want)
		}
	}
}

// fakeServer answers on a Unix socket as `apysup serve` does: refuse
// may answer a run itself; otherwise it is run r1, whose answer is its
// stream of the given events.
func fakeServer(t *testing.T, refuse func(w http.ResponseWriter, body []byte) bool, events string) string {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if r.URL.Query().Get("wait") != "events" {
			t.Errorf("POST %s", r.URL)
		}
		if refuse != nil && refuse(w, body) {
			return
		}
		if w.Header().Get("Apysup-Run-Id") == "" {
			w.Header().Set("Apysup-Run-Id", "r1")
		}
		w.Header().Set("Content-Type", "text/event-stream")
		for _, part := range strings.SplitAfter(events, "\n\n") { // one chunk per event
			io.WriteString(w, part)
			w.(http.Flusher).Flush()
		}
	})
	return serveOn(t, mux)
}

// serveOn serves h on a Unix socket in a short temporary directory.
func serveOn(t *testing.T, h http.Handler) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "ec-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	socket := filepath.Join(dir, "api.sock")
	ln, err := net.Listen("unix", socket)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return socket
}

// runOn runs inv against socket, its streams in files.
func runOn(t *testing.T, socket string) (code int, ran bool, stdout, stderr string) {
	t.Helper()
	inv := &invocation{addr: "unix:" + socket, socket: socket, name: "-c", source: []byte("x")}
	dir := t.TempDir()
	out, _ := os.Create(filepath.Join(dir, "out"))
	errOut, _ := os.Create(filepath.Join(dir, "err"))
	in, _ := os.Open(os.DevNull)
	defer out.Close()
	defer errOut.Close()
	defer in.Close()
	code, ran = inv.run(in, out, errOut)
	o, _ := os.ReadFile(out.Name())
	e, _ := os.ReadFile(errOut.Name())
	return code, ran, string(o), string(e)
}

func resultEvent(res string) string { return "event: result\ndata: " + res + "\n\n" }

// TestRunStreamsAndReports: output events reach the user's streams as
// they come, and the result's summary and exit status follow.
func TestRunStreamsAndReports(t *testing.T) {
	var body []byte
	socket := fakeServer(t, func(w http.ResponseWriter, b []byte) bool { body = b; return false },
		"event: state\ndata: {\"state\":\"running\"}\n\n"+
			"event: stdout\ndata: {\"data\":\"hello \"}\n\nevent: stderr\ndata: {\"data\":\"warn\\n\"}\n\n"+
			"event: stdout\ndata: {\"data\":\"world\"}\n\n"+
			resultEvent(`{"schema_version":"apysup.run_result.v1","status":"error","exit_code":3,"backend":"native","backend_source":"default",`+
				`"plan_sha256":"sha256:ab","receipts":[],"timings":{"total_ms":12},"usage":{}}`))
	code, ran, stdout, stderr := runOn(t, socket)
	if !ran || code != 3 {
		t.Fatalf("exit %d, ran %v (%s)", code, ran, stderr)
	}
	if want := "hello world\n──\nstatus    error, exit 3, 12 ms, backend native (default)\nplan      sha256:ab\n"; stdout != want {
		t.Errorf("stdout %q, want %q", stdout, want)
	}
	if stderr != "warn\n" {
		t.Errorf("stderr %q", stderr)
	}
	var req map[string]any
	if err := json.Unmarshal(body, &req); err != nil || req["source"] != "x" || req["script_name"] != "-c" {
		t.Errorf("request %s: %v", body, err)
	}
}

// TestRunFailures: a refusal, an answer that is no API's, and a stream
// that ends early are reported as the full client reports them; a server
// that cannot be reached is left to the full client (nothing was sent).
func TestRunFailures(t *testing.T) {
	refused := fakeServer(t, func(w http.ResponseWriter, _ []byte) bool {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		w.Write([]byte(`{"error_code":"busy","error":"the queue is full"}`))
		return true
	}, "")
	if code, ran, _, stderr := runOn(t, refused); !ran || code != 126 || stderr != "apysup: the server refused the run (busy): the queue is full\n" {
		t.Errorf("refused: exit %d ran %v %q", code, ran, stderr)
	}
	teapot := fakeServer(t, func(w http.ResponseWriter, _ []byte) bool { w.WriteHeader(http.StatusTeapot); return true }, "")
	if code, ran, _, stderr := runOn(t, teapot); !ran || code != 125 || !strings.Contains(stderr, "serve: POST /v1/runs?wait=events: HTTP 418") {
		t.Errorf("418: exit %d ran %v %q", code, ran, stderr)
	}
	badID := fakeServer(t, func(w http.ResponseWriter, _ []byte) bool { w.Header().Set("Apysup-Run-Id", "../x"); return false }, "")
	if code, ran, _, stderr := runOn(t, badID); !ran || code != 125 || !strings.Contains(stderr, "run id") {
		t.Errorf("bad id: exit %d ran %v %q", code, ran, stderr)
	}
	short := fakeServer(t, nil, "event: stdout\ndata: {\"data\":\"a\"}\n\n")
	if code, ran, _, stderr := runOn(t, short); !ran || code != 125 || !strings.Contains(stderr, "the event stream ended before the result") {
		t.Errorf("short stream: exit %d ran %v %q", code, ran, stderr)
	}
	if _, ran, stdout, stderr := runOn(t, filepath.Join(t.TempDir(), "none.sock")); ran || stdout+stderr != "" {
		t.Errorf("no server: ran %v %q %q", ran, stdout, stderr)
	}
}

// TestSignalCancelsTheRun: an interrupt once the server has the run
// cancels it there, and the client goes on to its result (killed: 130).
func TestSignalCancelsTheRun(t *testing.T) {
	cancelled := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/runs", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Apysup-Run-Id", "r1")
		io.WriteString(w, "event: stdout\ndata: {\"data\":\"started\\n\"}\n\n")
		w.(http.Flusher).Flush()
		syscall.Kill(os.Getpid(), syscall.SIGINT)
		select {
		case <-cancelled:
		case <-time.After(10 * time.Second):
			t.Error("no cancel within 10 s of the interrupt")
		}
		io.WriteString(w, resultEvent(`{"status":"killed","exit_code":-1,"error_code":"cancelled","receipts":[],"timings":{}}`))
	})
	mux.HandleFunc("POST /v1/runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("id") != "r1" {
			t.Errorf("cancel %s", r.URL)
		}
		close(cancelled)
		w.Write([]byte(`{"run_id":"r1","state":"running"}`))
	})
	socket := serveOn(t, mux)
	code, ran, stdout, stderr := runOn(t, socket)
	if !ran || code != 130 || !strings.HasPrefix(stdout, "started\n──\nstatus    killed (cancelled)") {
		t.Fatalf("exit %d ran %v %q %q", code, ran, stdout, stderr)
	}
}

// TestReadHead: the answers the early client reads, framed each way a
// server frames them, and the malformed ones it refuses.
func TestReadHead(t *testing.T) {
	for in, want := range map[string]string{
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello world":                                                 "200 hello",
		"HTTP/1.1 202 Accepted\r\nTransfer-Encoding: chunked\r\n\r\n3;x=y\r\nabc\r\n2\r\nde\r\n0\r\nT: v\r\n\r\n": "202 abcde",
		"HTTP/1.0 200 OK\nX: y\n\nto the end":                                                                     "200 to the end",
	} {
		resp, err := readHead(bufio.NewReader(strings.NewReader(in)))
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		body, err := io.ReadAll(resp.body)
		if got := fmt.Sprintf("%d %s", resp.status, body); err != nil || got != want {
			t.Errorf("%q: %q %v, want %q", in, got, err, want)
		}
	}
	for _, in := range []string{
		"", "SSH-2.0\r\n\r\n", "HTTP/1.1 abc\r\n\r\n", "HTTP/1.1 200\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200\r\nNoColon\r\n\r\n", "HTTP/1.1 200\r\nTransfer-Encoding: gzip\r\n\r\n",
		"HTTP/1.1 200\r\n" + strings.Repeat("X: y\r\n", maxHeaders+1) + "\r\n",
		"HTTP/1.1 200 " + strings.Repeat("x", maxLineBytes) + "\r\n\r\n",
	} {
		if _, err := readHead(bufio.NewReader(strings.NewReader(in))); err == nil {
			t.Errorf("%.40q: accepted", in)
		}
	}
	for _, in := range []string{"zz\r\n", "3\r\nabcX", "3\r\nab", "5\r\nabc\r\n"} {
		resp, err := readHead(bufio.NewReader(strings.NewReader("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + in)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadAll(resp.body); err == nil {
			t.Errorf("chunked %q: read without an error", in)
		}
	}
}

// FuzzReadHead: any answer is read or refused, never past its bounds.
func FuzzReadHead(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"))
	f.Add([]byte("HTTP/1.1 202 Accepted\r\nContent-Length: 2\r\n\r\n{}"))
	f.Fuzz(func(t *testing.T, in []byte) {
		resp, err := readHead(bufio.NewReader(strings.NewReader(string(in))))
		if err != nil {
			return
		}
		if body, _ := io.ReadAll(resp.body); len(body) > len(in) {
			t.Fatalf("a body of %d bytes from %d", len(body), len(in))
		}
	})
}
