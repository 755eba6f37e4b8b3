package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/journal"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/internal/testenv"
)

// liveServer is a Server serving on a Unix socket in a temp dir.
type liveServer struct {
	*Server
	socket string
	client *Client
}

func startServer(t *testing.T, cfg Config) *liveServer {
	t.Helper()
	testenv.NeedRoot(t)
	dir := shortTempDir(t)
	if cfg.StateDir == "" {
		cfg.StateDir = filepath.Join(dir, "state")
		if err := os.Mkdir(cfg.StateDir, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(dir, "api.sock")
	l, err := Listen("unix:"+socket, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- s.Serve(ctx, []*Listener{l}, 10*time.Second) }()
	c, err := NewClient("unix:"+socket, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		stop()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		if left, _ := os.ReadDir(cfg.StateDir); len(left) > 0 {
			t.Errorf("the state dir holds %d entries after the server ended", len(left))
		}
		if _, err := os.Stat(socket); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the socket is left behind: %v", err)
		}
	})
	return &liveServer{Server: s, socket: socket, client: c}
}

// shortTempDir is a temp dir with a short path: a run's channel socket,
// deep in the state directory, must fit in sockaddr_un.
func shortTempDir(t *testing.T) string {
	dir, err := os.MkdirTemp("", "as-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

func TestRealRunsOverUnixSocket(t *testing.T) {
	ls := startServer(t, Config{Pool: 1})
	ctx := context.Background()
	for p := ls.sup.PoolState(); p.Ready == 0; p = ls.sup.PoolState() { // the pool starts its sandbox in the background
		if p.Error != "" {
			t.Fatalf("the pool: %s", p.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, err := ls.client.Run(ctx, RunRequest{Source: "import sys\nprint(6*7)\nprint(sys.argv[1:])", Args: []string{"a", "b"}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != "ok" || res.Stdout != "42\n['a', 'b']\n" || res.SchemaVersion != RunResultSchema || res.RunID == "" {
		t.Fatalf("result: %s %q %q", res.Status, res.Stdout, res.Error)
	}
	if p := ls.sup.PoolState(); p.Taken != 1 || p.Cold != 0 {
		t.Errorf("a run with the default limits did not take the pooled sandbox: %+v", p)
	}
	res, err = ls.client.Run(ctx, RunRequest{Source: "import sys; sys.exit(3)"})
	if err != nil || res.Status != "error" || res.ExitCode != 3 {
		t.Fatalf("exit 3: %v %+v", err, res)
	}
	// A workspace in, the final workspace out.
	res, err = ls.client.Run(ctx, RunRequest{
		Source:    "import pathlib\np = pathlib.Path('/workspace/data/in.txt')\npathlib.Path('/workspace/out.txt').write_text(p.read_text().upper())",
		Workspace: map[string][]byte{"data/in.txt": []byte("hello")}, Export: true})
	if err != nil || res.Status != "ok" || string(res.Exported["out.txt"]) != "HELLO" || string(res.Exported["data/in.txt"]) != "hello" {
		t.Fatalf("workspace: %v %+v %q", err, res.Status, res.Exported)
	}
}

func TestEventsStreamCallsAndResultWithoutGrants(t *testing.T) {
	ls := startServer(t, Config{})
	ctx := context.Background()
	plan, err := ls.client.SealPlan(ctx, json.RawMessage(echoManifest))
	if err != nil {
		t.Fatal(err)
	}
	id, err := ls.client.Start(ctx, RunRequest{PlanSHA256: plan.PlanSHA256,
		Source: "import weather\nprint(weather.get(city='" + grantMarker + "'))\ntry:\n    weather.get(city='Oslo')\nexcept Exception as e:\n    print(e.error_code)"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	var kinds []string
	var result RunResult
	var stdout strings.Builder
	for ev, err := range ls.client.Events(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Name)
		if strings.Contains(string(ev.Data), `"`+grantMarker+`"]`) {
			t.Errorf("event %s carries the grant", ev.Name)
		}
		switch ev.Name {
		case EventLedger:
			var e struct{ Kind string }
			json.Unmarshal(ev.Data, &e)
			kinds = append(kinds, e.Kind)
		case EventStdout:
			var chunk struct{ Data string }
			json.Unmarshal(ev.Data, &chunk)
			stdout.WriteString(chunk.Data)
		case EventResult:
			json.Unmarshal(ev.Data, &result)
		}
	}
	if stdout.String() != result.Stdout {
		t.Errorf("stdout events %q, result's stdout %q", stdout.String(), result.Stdout)
	}
	if names[0] != EventState || names[len(names)-1] != EventResult {
		t.Errorf("events %v: want state first and result last", names)
	}
	if result.Status != "ok" || result.Stdout != "{'echo': {'city': '"+grantMarker+"'}}\ngrant_denied\n" || len(result.Receipts) != 1 {
		t.Fatalf("result %s %q %d receipts", result.Status, result.Stdout, len(result.Receipts))
	}
	if got, want := strings.Join(kinds, " "), "run_admitted call_intent call_admitted call_dispatched call_receipt call_intent call_admitted call_refused workspace run_ended"; got != want {
		t.Errorf("ledger events %q, want %q", got, want)
	}
	// A late reader gets the same stream from the start.
	n := 0
	for ev, err := range ls.client.Events(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Name != names[n] {
			t.Errorf("replayed event %d is %s, want %s", n, ev.Name, names[n])
		}
		n++
	}
	if n != len(names) {
		t.Errorf("replay has %d events, want %d", n, len(names))
	}
}

func TestApprovalsThroughTheAPI(t *testing.T) {
	ls := startServer(t, Config{})
	ctx := context.Background()
	manifest := strings.Replace(echoManifest, `"python": {"module"`, `"approval": {"lease_seconds": 60}, "python": {"module"`, 1)
	id, err := ls.client.Start(ctx, RunRequest{Manifest: json.RawMessage(manifest), Approve: ApproveAPI,
		Source: "import weather\nprint(weather.get(city='" + grantMarker + "'))"})
	if err != nil {
		t.Fatal(err)
	}
	decided := ""
	for ev, err := range ls.client.Events(ctx, id) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Name == EventApproval {
			var rec struct{ ID, State string }
			json.Unmarshal(ev.Data, &rec)
			if rec.State != "waiting" {
				continue
			}
			decided = rec.ID
			var list struct{ Approvals []struct{ ID string } }
			if err := ls.client.call(ctx, http.MethodGet, "/v1/approvals", nil, &list); err != nil || len(list.Approvals) != 1 || list.Approvals[0].ID != rec.ID {
				t.Fatalf("pending: %v %+v", err, list)
			}
			var d Decision
			if err := ls.client.call(ctx, http.MethodPost, "/v1/approvals/"+rec.ID+"/approve", nil, &d); err != nil || d.State != "approved" {
				t.Fatalf("approve: %v %+v", err, d)
			}
			err := ls.client.call(ctx, http.MethodPost, "/v1/approvals/"+rec.ID+"/reject", nil, &d)
			var e *Error
			if !errors.As(err, &e) || e.Code != CodeApprovalDecided {
				t.Errorf("second decision: %v", err)
			}
		}
		if ev.Name == EventResult {
			var res RunResult
			json.Unmarshal(ev.Data, &res)
			if res.Status != "ok" || len(res.Receipts) != 1 || res.Receipts[0].Outcome != "ok" || res.Receipts[0].ApprovalRequestID == "" {
				t.Fatalf("approved run: %s %q %+v", res.Status, res.Stdout, res.Receipts)
			}
		}
	}
	// After the run's end the request is still known as decided (a
	// decision on its way when the run ended gets the same answer as one
	// that came before), and an id no run issued is not found.
	var d Decision
	err = ls.client.call(ctx, http.MethodPost, "/v1/approvals/"+decided+"/reject", nil, &d)
	if e := (*Error)(nil); decided == "" || !errors.As(err, &e) || e.Code != CodeApprovalDecided {
		t.Errorf("a decision after the run's end: %v", err)
	}
	err = ls.client.call(ctx, http.MethodPost, "/v1/approvals/apr-nonexistent/approve", nil, &d)
	if e := (*Error)(nil); !errors.As(err, &e) || e.Code != CodeApprovalNotFound {
		t.Errorf("a decision on an unknown id: %v", err)
	}
}

// waitRunning waits for a run's state event.
func waitRunning(t *testing.T, c *Client, id string) {
	t.Helper()
	for ev, err := range c.Events(context.Background(), id) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Name == EventState {
			return
		}
	}
	t.Fatal("the run ended without running")
}

func TestCancelARunningRun(t *testing.T) {
	ls := startServer(t, Config{})
	ctx := context.Background()
	id, err := ls.client.Start(ctx, RunRequest{Source: "import time\nprint('up', flush=True)\ntime.sleep(120)"})
	if err != nil {
		t.Fatal(err)
	}
	waitRunning(t, ls.client, id)
	if err := ls.client.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	var st RunState
	for ev := range ls.client.Events(ctx, id) {
		if ev.Name == EventResult {
			json.Unmarshal(ev.Data, &st.Result)
		}
	}
	if st.Result == nil || st.Result.Status != "killed" {
		t.Fatalf("cancelled run: %+v", st.Result)
	}
}

// TestDisconnectCancelsASynchronousRun: a client that leaves a waiting
// POST /v1/runs cancels its run.
func TestDisconnectCancelsASynchronousRun(t *testing.T) {
	ls := startServer(t, Config{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := ls.client.Run(ctx, RunRequest{Source: "import time\ntime.sleep(120)"})
		done <- err
	}()
	var r *run
	for r == nil { // the run is admitted once the server has read the request
		for _, lr := range ls.liveRuns() {
			r = lr
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitRunning(t, ls.client, r.id)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	<-r.done
	if st := r.snapshot(); st.Result.Status != "killed" {
		t.Fatalf("the run went on without its client: %s %s", st.Result.Status, st.Result.ErrorCode)
	}
}

// TestStreamedRun: POST /v1/runs?wait=events answers with the run's id
// and its event stream, output as it is written and the result last; a
// client that leaves the stream cancels its run.
func TestStreamedRun(t *testing.T) {
	ls := startServer(t, Config{})
	id, events, err := ls.client.Stream(context.Background(), RunRequest{Source: "print('a', flush=True)\nimport sys\nprint('b', file=sys.stderr)\nsys.exit(3)"})
	if err != nil || !strings.HasPrefix(id, "run-") {
		t.Fatalf("%q %v", id, err)
	}
	var names []string
	var res RunResult
	for ev, err := range events {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, ev.Name)
		if ev.Name == EventResult {
			json.Unmarshal(ev.Data, &res)
		}
	}
	if res.RunID != id || res.Status != "error" || res.ExitCode != 3 || !slices.Contains(names, EventStdout) || !slices.Contains(names, EventStderr) ||
		names[len(names)-1] != EventResult {
		t.Fatalf("events %v, result %+v", names, res)
	}

	ctx, cancel := context.WithCancel(context.Background())
	id, events, err = ls.client.Stream(ctx, RunRequest{Source: "import time\nprint('up', flush=True)\ntime.sleep(120)"})
	if err != nil {
		t.Fatal(err)
	}
	for ev := range events {
		if ev.Name == EventStdout {
			break
		}
	}
	cancel()
	r := ls.lookup(id)
	select {
	case <-r.done:
	case <-time.After(60 * time.Second):
		t.Fatal("the run went on after its stream's client left")
	}
	if st := r.snapshot(); st.Result.Status != "killed" {
		t.Fatalf("the run went on without its client: %s %s", st.Result.Status, st.Result.ErrorCode)
	}
}

// TestUnixPeersAreCheckedBySOPeercred: with the socket opened to everyone
// (a mode mistake), a peer that is neither root nor in the socket's group
// is still refused, and one in the group is served. The clients run as
// uid 65534 (syscall.Credential).
func TestUnixPeersAreCheckedBySOPeercred(t *testing.T) {
	ls := startServer(t, Config{})
	if err := os.Chmod(filepath.Dir(ls.socket), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(ls.socket, 0o666); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(ls.socket)
	group := st.Sys().(*syscall.Stat_t).Gid
	probe := `import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"GET /v1/health HTTP/1.0\r\nHost: x\r\n\r\n")
print(s.recv(64).split(b"\r\n")[0].decode())`
	for _, c := range []struct {
		name   string
		groups []uint32
		want   string
	}{
		{"outsider", nil, "403"},
		{"in the socket's group", []uint32{group}, "200"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmd := exec.Command("/usr/bin/python3.11", "-S", "-c", probe, ls.socket)
			cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534, Groups: c.groups}}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if !strings.Contains(string(out), " "+c.want+" ") {
				t.Errorf("status line %q, want %s", out, c.want)
			}
		})
	}
}

func TestTCPNeedsTheBearerToken(t *testing.T) {
	testenv.NeedRoot(t)
	dir := t.TempDir()
	if _, err := Listen("tcp:127.0.0.1:0", ""); err == nil {
		t.Fatal("a TCP listener without a token")
	}
	tokenFile := filepath.Join(dir, "token")
	os.WriteFile(tokenFile, []byte("short\n"), 0o600)
	if _, err := Listen("tcp:127.0.0.1:0", tokenFile); err == nil {
		t.Fatal("a short token was accepted")
	}
	token := "0123456789abcdef0123456789abcdef"
	os.WriteFile(tokenFile, []byte(token+"\n"), 0o600)
	os.Chmod(tokenFile, 0o644)
	if _, err := Listen("tcp:127.0.0.1:0", tokenFile); err == nil {
		t.Fatal("a token file others can read was accepted")
	}
	os.Chmod(tokenFile, 0o600)
	tokenDir := filepath.Join(dir, "tokens")
	os.Mkdir(tokenDir, 0o700)
	if _, err := Listen("tcp:127.0.0.1:0", tokenDir); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("a directory as the token file: %v", err)
	}
	l, err := Listen("tcp:127.0.0.1:0", tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Config{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { s.Serve(ctx, []*Listener{l}, time.Second) })
	defer func() { stop(); wg.Wait() }()
	url := "http://" + strings.TrimPrefix(l.Name, "tcp:")
	for _, c := range []struct {
		token string
		want  error
	}{{"", &Error{Code: CodeUnauthorized}}, {token + "x", &Error{Code: CodeUnauthorized}}, {token, nil}} {
		cl, _ := NewClient(url, c.token)
		var h Health
		err := cl.call(context.Background(), http.MethodGet, "/v1/health", nil, &h)
		var e *Error
		switch {
		case c.want == nil && err != nil:
			t.Errorf("the right token: %v", err)
		case c.want != nil && (!errors.As(err, &e) || e.Code != CodeUnauthorized):
			t.Errorf("token %q: %v, want unauthorized", c.token, err)
		}
	}
	// "OPTIONS *" is the API's to refuse, not net/http's plain 200.
	conn, err := net.Dial("tcp", strings.TrimPrefix(l.Name, "tcp:"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "OPTIONS * HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
	answer, _ := io.ReadAll(conn)
	if !strings.HasPrefix(string(answer), "HTTP/1.1 401") || !strings.Contains(string(answer), CodeUnauthorized) {
		t.Errorf("OPTIONS * without the token: %q", answer)
	}
}

// TestRunsUnderAnIdempotencyKey: with a journal, a second run under a key
// returns the first one's result without running (same run id, replayed);
// another script under the key is refused; without a journal, a key is
// refused with journal_unavailable (503).
func TestRunsUnderAnIdempotencyKey(t *testing.T) {
	jn, err := journal.Open(filepath.Join(shortTempDir(t), "journal"), journal.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer jn.Close()
	ls := startServer(t, Config{Journal: jn})
	ctx := context.Background()
	req := RunRequest{Source: "import time\nprint(time.time_ns())", IdempotencyKey: "order-17"}
	first, err := ls.client.Run(ctx, req)
	if err != nil || first.Status != "ok" || first.Idempotency == nil || first.Idempotency.Attempt != 1 {
		t.Fatalf("first: %v %+v", err, first)
	}
	again, err := ls.client.Run(ctx, req)
	if err != nil || again.Stdout != first.Stdout || again.RunID != first.RunID || again.Idempotency == nil || !again.Idempotency.Replayed {
		t.Fatalf("again: %v %+v", err, again)
	}
	other, err := ls.client.Run(ctx, RunRequest{Source: "print(1)", IdempotencyKey: "order-17"})
	if err != nil || other.Status != "refused" || other.ErrorCode != journal.CodeKeyConflict {
		t.Fatalf("another script under the key: %v %+v", err, other)
	}
	plain := startServer(t, Config{})
	if _, err := plain.client.Run(ctx, req); err == nil || !strings.Contains(err.Error(), journal.CodeUnavailable) {
		t.Fatalf("a key without a journal: %v", err)
	}
	if _, err := ls.client.Run(ctx, RunRequest{Source: "pass", IdempotencyKey: "bad key"}); err == nil || !strings.Contains(err.Error(), CodeInvalidRequest) {
		t.Fatalf("a malformed key: %v", err)
	}
}

// With WazeroPool, New loads the wazero interpreter, whose pool has a
// child loaded before any run is admitted; Shutdown leaves none.
func TestWazeroPoolStartsWithTheServer(t *testing.T) {
	_, err := wazero.Locate("")
	var u *wazero.UnavailableError
	testenv.Need(t, !errors.As(err, &u), "the WASI CPython build (make wasi-python)")
	s, err := New(Config{StateDir: t.TempDir(), WazeroPool: 1})
	if err != nil {
		t.Fatal(err)
	}
	const mark = "apysup-wazero-child"
	deadline := time.Now().Add(2 * time.Minute)
	for len(testenv.Children(mark)) < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if pids := testenv.Children(mark); len(pids) != 1 {
		t.Fatalf("wazero children before any run: %v", pids)
	}
	for s.sup.WazeroPoolState().Ready < 1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond) // started, then loaded
	}
	rec := httptest.NewRecorder()
	s.health(rec, httptest.NewRequest(http.MethodGet, "/v1/health", nil))
	var h Health
	if err := json.Unmarshal(rec.Body.Bytes(), &h); err != nil || h.Wazero != (supervisor.WazeroPoolState{Size: 1, Ready: 1, Loaded: 1}) {
		t.Fatalf("health %s: %v", rec.Body, err)
	}
	rec = httptest.NewRecorder()
	s.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if !strings.Contains(rec.Body.String(), "\napysup_wazero_pool_ready 1\n") {
		t.Fatalf("metrics:\n%s", rec.Body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if pids := testenv.Children(mark); len(pids) != 0 {
		t.Fatalf("wazero children after Shutdown: %v", pids)
	}
}
