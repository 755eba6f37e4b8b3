package rpc

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/testenv"
)

// adminSocket serves a's admin API on a fresh socket in dir and returns its
// path; everything stops and the socket is gone when the test ends.
func adminSocket(t *testing.T, a *broker.Approvals, dir string) (string, *ApprovalServer) {
	t.Helper()
	path := filepath.Join(dir, "admin.sock")
	l, err := ListenApprovalSocket(path)
	if err != nil {
		t.Fatal(err)
	}
	s := NewApprovalServer(a, ServerConfig{})
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; err != nil {
			t.Error(err)
		}
		if _, err := os.Lstat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket left behind: %v", err)
		}
	})
	return path, s
}

// testBinding binds the call main:program:<n> of the run run_1 under a
// stand-in Plan digest.
func testBinding(callID, arguments string) broker.ApprovalBinding {
	return broker.ApprovalBinding{RunID: "run_1", PlanSHA256: canonjson.PlainDigest([]byte("plan")), ParentCallID: "main",
		CallID: callID, Capability: "notes.put", ArgumentsSHA256: canonjson.PlainDigest([]byte(arguments))}
}

func openRequest(t *testing.T, a *broker.Approvals, callID, preview string) broker.ApprovalRecord {
	t.Helper()
	rec, err := a.Request(broker.ApprovalRequest{ApprovalBinding: testBinding(callID, preview), Preview: preview, Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func wantCode(t *testing.T, err error, status int, code string) *ApprovalError {
	t.Helper()
	var ae *ApprovalError
	if !errors.As(err, &ae) || ae.HTTPStatus != status || ae.Code != code {
		t.Fatalf("got %v, want %d %s", err, status, code)
	}
	return ae
}

func TestApprovalServerFlow(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	path, _ := adminSocket(t, a, t.TempDir())
	if fi, err := os.Lstat(path); err != nil || fi.Mode().Perm() != 0o600 || fi.Mode().Type() != os.ModeSocket {
		t.Fatalf("socket %v %v", fi.Mode(), err)
	}
	c := NewApprovalClient(path, 10*time.Second)
	ctx := t.Context()

	list, err := c.List(ctx, 0)
	if err != nil || list.Pending == nil || len(list.Pending) != 0 {
		t.Fatalf("empty list: %+v %v", list, err)
	}
	first := openRequest(t, a, "main:program:1", `{"text":"buy milk"}`)
	second := openRequest(t, a, "main:program:2", `{"text":"sell milk"}`)
	list, err = c.List(ctx, 0)
	if err != nil || len(list.Pending) != 2 || list.Pending[0].ID != first.ID || list.Pending[0].Preview != `{"text":"buy milk"}` ||
		list.Pending[1].ID != second.ID || list.Now.IsZero() {
		t.Fatalf("list: %+v %v", list, err)
	}

	rec, err := c.Approve(ctx, first.ID)
	if err != nil || rec.ID != first.ID || rec.State != broker.ApprovalApproved {
		t.Fatalf("approve: %+v %v", rec, err)
	}
	_, err = c.Approve(ctx, first.ID)
	if ae := wantCode(t, err, 409, CodeApprovalAlreadyDecided); ae.State != broker.ApprovalApproved {
		t.Fatalf("state %q", ae.State)
	}
	_, err = c.Reject(ctx, first.ID)
	wantCode(t, err, 409, CodeApprovalAlreadyDecided)
	if rec, err = c.Reject(ctx, second.ID); err != nil || rec.State != broker.ApprovalRejected {
		t.Fatalf("reject: %+v %v", rec, err)
	}
	_, err = c.Approve(ctx, "apr_000000000000000000000000")
	wantCode(t, err, 404, CodeApprovalNotFound)
	for _, bad := range []string{"apr_x", "nope", "../records", "apr_00000000000000000000000G", "a/b"} {
		_, err = c.Approve(ctx, bad)
		wantCode(t, err, 400, CodeMalformedRequest)
	}

	recs, err := c.Records(ctx)
	if err != nil || len(recs.Records) != 2 || recs.Records[0].State != broker.ApprovalApproved || recs.Records[1].State != broker.ApprovalRejected ||
		recs.Records[0].ApprovalBinding != testBinding("main:program:1", `{"text":"buy milk"}`) || recs.Records[1].Dispatch != broker.DispatchNone {
		t.Fatalf("records: %+v %v", recs, err)
	}
	// The wire names what each record binds, its decision and its dispatch.
	body := rawRequest(t, path, "GET /v1/approvals/records HTTP/1.1\r\nHost: x\r\n\r\n")
	for _, want := range []string{`"run_id":"run_1"`, `"plan_sha256":"` + recs.Records[0].PlanSHA256 + `"`, `"parent_call_id":"main"`,
		`"call_id":"main:program:1"`, `"capability":"notes.put"`, `"arguments_sha256":"sha256:`, `"state":"approved"`, `"dispatch":"none"`} {
		if !strings.Contains(body, want) {
			t.Errorf("records lack %s: %s", want, body)
		}
	}
	list, err = c.List(ctx, 0)
	if err != nil || len(list.Pending) != 0 {
		t.Fatalf("decided requests still listed: %+v", list)
	}
}

func TestApprovalServerRecordsHoldNoPreview(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	path, _ := adminSocket(t, a, t.TempDir())
	openRequest(t, a, "main:program:1", `{"secret":"PREVIEW-ONLY"}`)
	body := rawRequest(t, path, "GET /v1/approvals/records HTTP/1.1\r\nHost: x\r\n\r\n")
	if !strings.HasPrefix(body, "HTTP/1.1 200") || strings.Contains(body, "PREVIEW-ONLY") || strings.Contains(body, `"preview"`) {
		t.Fatalf("%s", body)
	}
	if body := rawRequest(t, path, "GET /v1/approvals HTTP/1.1\r\nHost: x\r\n\r\n"); !strings.Contains(body, "PREVIEW-ONLY") {
		t.Fatalf("pending without preview: %s", body)
	}
}

// rawRequest sends req on a new connection and returns the whole response.
func rawRequest(t *testing.T, path, req string) string {
	t.Helper()
	conn, err := net.Dial("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, req); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.Proto + " " + resp.Status + "\n" + string(body)
}

func TestApprovalServerWireRefusals(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	path, _ := adminSocket(t, a, t.TempDir())
	id := openRequest(t, a, "main:program:1", "{}").ID
	big := strings.Repeat(" ", MaxApprovalBodyBytes+1)
	post := func(target, body string) string {
		return "POST " + target + " HTTP/1.1\r\nHost: x\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	}
	for _, tc := range []struct{ req, want string }{
		{"GET /v1/calls HTTP/1.1\r\nHost: x\r\n\r\n", `404 Not Found` + "\n" + `{"error_code":"not_found"}`},
		{"OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", `{"error_code":"`},
		{"GET /v1/approvals/ HTTP/1.1\r\nHost: x\r\n\r\n", `{"error_code":"not_found"}`},
		{"GET /v1/approvals/" + id + "/maybe HTTP/1.1\r\nHost: x\r\n\r\n", `{"error_code":"not_found"}`},
		{"POST /v1/approvals HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", `405 Method Not Allowed` + "\n" + `{"error_code":"method_not_allowed"}`},
		{"GET /v1/approvals/" + id + "/approve HTTP/1.1\r\nHost: x\r\n\r\n", `{"error_code":"method_not_allowed"}`},
		{"GET /v1/approvals?wait=2m HTTP/1.1\r\nHost: x\r\n\r\n", `400 Bad Request` + "\n" + `{"error_code":"malformed_request"}`},
		{"GET /v1/approvals?wait=soon HTTP/1.1\r\nHost: x\r\n\r\n", `{"error_code":"malformed_request"}`},
		{"GET /v1/approvals?all=1 HTTP/1.1\r\nHost: x\r\n\r\n", `{"error_code":"malformed_request"}`},
		{"GET /v1/approvals/records?x HTTP/1.1\r\nHost: x\r\n\r\n", `{"error_code":"malformed_request"}`},
		{post("/v1/approvals/"+id+"/approve", `{"reason":"x"}`), `{"error_code":"malformed_request"}`},
		{post("/v1/approvals/"+id+"/approve", `null`), `{"error_code":"malformed_request"}`},
		{post("/v1/approvals/"+id+"/approve", `{}{}`), `{"error_code":"malformed_request"}`},
		{post("/v1/approvals/"+id+"/approve", big), `413 Request Entity Too Large` + "\n" + `{"error_code":"request_too_large"}`},
		{post("/v1/approvals/"+id+"/approve?now=1", ``), `{"error_code":"malformed_request"}`},
		// A request the refusals above left waiting, decided with an empty object.
		{post("/v1/approvals/"+id+"/reject", ` {} `), `200 OK` + "\n" + `{"record":{"id":"` + id + `"`},
	} {
		if got := rawRequest(t, path, tc.req); !strings.Contains(got, tc.want) {
			t.Errorf("%.60q:\n got %s\nwant %s", tc.req, got, tc.want)
		}
	}
	big = "GET /v1/approvals HTTP/1.1\r\nHost: x\r\nX-Pad: " + strings.Repeat("a", 64<<10) + "\r\n\r\n"
	if got := rawRequest(t, path, big); !strings.Contains(got, "431") {
		t.Errorf("oversized header: %s", got)
	}
}

func TestApprovalServerListWaits(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	path, _ := adminSocket(t, a, t.TempDir())
	c := NewApprovalClient(path, 10*time.Second)
	got := make(chan *ApprovalList, 1)
	go func() {
		l, err := c.List(t.Context(), MaxApprovalWait)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	rec := openRequest(t, a, "main:program:1", "{}")
	if l := <-got; l == nil || len(l.Pending) != 1 || l.Pending[0].ID != rec.ID {
		t.Fatalf("%+v", l)
	}
	// A watcher that gives up ends its request.
	ctx, cancel := context.WithCancel(t.Context())
	a.Reject(rec.ID)
	go cancel()
	if _, err := c.List(ctx, MaxApprovalWait); !errors.Is(err, context.Canceled) {
		t.Fatalf("%v", err)
	}
}

func TestListenApprovalSocketRefusesExistingPath(t *testing.T) {
	dir := t.TempDir()
	for _, create := range []func(string) error{
		func(p string) error { return os.WriteFile(p, nil, 0o600) },
		func(p string) error { return os.Symlink("/nonexistent", p) },
		func(p string) error { // a live socket of someone else's
			l, err := net.Listen("unix", p)
			if err == nil {
				l.(*net.UnixListener).SetUnlinkOnClose(false)
				t.Cleanup(func() { l.Close() })
			}
			return err
		},
	} {
		p := filepath.Join(dir, "s"+strconv.Itoa(len(dir)))
		os.Remove(p)
		if err := create(p); err != nil {
			t.Fatal(err)
		}
		if _, err := ListenApprovalSocket(p); !errors.Is(err, os.ErrExist) {
			t.Fatalf("%s: %v", p, err)
		}
		if _, err := os.Lstat(p); err != nil {
			t.Fatalf("refusal removed the existing file: %v", err)
		}
		os.Remove(p)
	}
	if _, err := ListenApprovalSocket(filepath.Join(dir, strings.Repeat("x", 120))); err == nil {
		t.Fatal("overlong path accepted")
	}
}

func TestApprovalServerPeerCheck(t *testing.T) {
	s := NewApprovalServer(broker.NewApprovals(broker.ApprovalOptions{}), ServerConfig{})
	s.uid = 1000
	for _, tc := range []struct {
		p    peer
		want bool
	}{
		{peer{uid: 1000, ok: true}, true},
		{peer{uid: 0, ok: true}, true},
		{peer{uid: 1001, ok: true}, false},
		{peer{uid: 65534, ok: true}, false},
		{peer{uid: 1000, ok: false}, false}, // no SO_PEERCRED: nobody
	} {
		if got := s.allowed(tc.p); got != tc.want {
			t.Errorf("%+v: %v", tc.p, got)
		}
	}
}

// TestApprovalServerRefusesOtherUID connects as another uid for real: the
// socket's mode keeps it out, and when the mode is widened on purpose the
// SO_PEERCRED check still refuses it.
func TestApprovalServerRefusesOtherUID(t *testing.T) {
	testenv.NeedRoot(t)
	const py = "/usr/bin/python3.11" // Debian's, reachable by uid 65534
	_, err := os.Stat(py)
	testenv.Need(t, err == nil, "/usr/bin/python3.11 (Debian package python3.11)")
	dir, err := os.MkdirTemp("", "apysup-admin-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o711); err != nil {
		t.Fatal(err)
	}
	a := broker.NewApprovals(broker.ApprovalOptions{})
	path, _ := adminSocket(t, a, dir)
	id := openRequest(t, a, "main:program:1", "{}").ID
	asNobody := func() string {
		cmd := exec.Command(py, "-I", "-c", `
import socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print("connect:", type(e).__name__); sys.exit(0)
s.sendall(b"POST /v1/approvals/" + sys.argv[2].encode() + b"/approve HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n")
print(s.recv(4096).decode())
`, path, id)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return string(out)
	}
	if out := asNobody(); !strings.Contains(out, "connect: PermissionError") {
		t.Fatalf("mode 0600 let another uid connect: %s", out)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
	if out := asNobody(); !strings.Contains(out, "403 Forbidden") || !strings.Contains(out, `"error_code":"forbidden"`) {
		t.Fatalf("another uid was answered: %s", out)
	}
	if rec, _ := a.Get(id); rec.State != broker.ApprovalWaiting {
		t.Fatalf("a refused peer decided: %s", rec.State)
	}
}

// BenchmarkApprovalDecision: one request opened, listed and approved over
// the admin socket, as `apysup approvals` does it (a connection per call).
func BenchmarkApprovalDecision(b *testing.B) {
	a := broker.NewApprovals(broker.ApprovalOptions{MaxRecords: 1 << 20})
	path := filepath.Join(b.TempDir(), "admin.sock")
	l, err := ListenApprovalSocket(path)
	if err != nil {
		b.Fatal(err)
	}
	s := NewApprovalServer(a, ServerConfig{})
	go s.Serve(l)
	defer s.Close()
	c := NewApprovalClient(path, 10*time.Second)
	for b.Loop() {
		rec, err := a.Request(broker.ApprovalRequest{ApprovalBinding: testBinding("main:program:1", "{}"), Preview: "{}", Lease: time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		if l, err := c.List(b.Context(), 0); err != nil || len(l.Pending) != 1 {
			b.Fatal(l, err)
		}
		if _, err := c.Approve(b.Context(), rec.ID); err != nil {
			b.Fatal(err)
		}
	}
}
