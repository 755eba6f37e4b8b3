package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/testenv"
)

type testServer struct {
	reg    *Registry
	b      *fakeBroker
	rs     *RunSocket
	cred   []byte
	client *http.Client
}

func startServer(t *testing.T, peerUID uint32, cfg ServerConfig) *testServer {
	t.Helper()
	ts := &testServer{reg: NewRegistry(RegistryConfig{}), b: newFakeBroker()}
	_, cred, err := ts.reg.Open(ChannelConfig{
		ChannelID: "ch-1", InvocationID: "inv-1", ExecutionID: "run-1", PlanSHA256: testPlan,
		Expiry: time.Now().Add(time.Hour), PeerUID: peerUID, Dispatcher: ts.b,
	})
	if err != nil {
		t.Fatal(err)
	}
	ts.cred = cred
	ts.rs, err = ListenRunSocket(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(ts.reg, cfg)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ts.rs.Listener) }()
	tr := &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", ts.rs.Path)
	}}
	ts.client = &http.Client{Transport: tr}
	t.Cleanup(func() {
		select {
		case <-ts.b.release:
		default:
			close(ts.b.release)
		}
		tr.CloseIdleConnections()
		if err := srv.Close(); err != nil {
			t.Error(err)
		}
		if err := <-served; err != nil {
			t.Error(err)
		}
		_ = ts.reg.Close("ch-1")
		if err := ts.rs.Close(); err != nil {
			t.Error(err)
		}
	})
	return ts
}

func (ts *testServer) auth() string {
	return "Apysup-Credential " + base64.RawURLEncoding.EncodeToString(ts.cred)
}

func (ts *testServer) do(t *testing.T, method, path, auth string, body io.Reader) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, "http://apysup"+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Fatalf("content type %q", ct)
	}
	return resp.StatusCode, string(out)
}

// "OPTIONS *", which net/http answers itself (a plain 200) unless told
// not to, gets a channel code as every request the server can read.
func TestServerOptionsStar(t *testing.T) {
	ts := startServer(t, uint32(os.Getuid()), ServerConfig{})
	got := rawRequest(t, ts.rs.Path, "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
	if !strings.Contains(got, `"error_code":"`) || strings.Contains(got, "200 OK") {
		t.Errorf("OPTIONS *: %s", got)
	}
}

func TestServerStatuses(t *testing.T) {
	ts := startServer(t, uint32(os.Getuid()), ServerConfig{})
	good := func() io.Reader { return bytes.NewReader(envelopeFor(frame("capability-1", "echo.say", `{"a":1}`))) }
	unauth := `{"status":"rejected","error_code":"unauthenticated"}`
	padded := ts.auth() + "="
	cases := []struct {
		name, method, path, auth string
		body                     io.Reader
		status                   int
		want                     string
	}{
		{"completed", "POST", CallsPath, ts.auth(), good(), 200, `{"status":"completed","broker_response":{"schema_version":"apysup.broker.v1","call_id":"capability-1","status":"ok","result":{"a":1},"receipt_id":"sha256:2222222222222222222222222222222222222222222222222222222222222222"}}`},
		{"replayed", "POST", CallsPath, ts.auth(), good(), 200, `{"status":"completed","broker_response":{"schema_version":"apysup.broker.v1","call_id":"capability-1","status":"ok","result":{"a":1},"receipt_id":"sha256:2222222222222222222222222222222222222222222222222222222222222222"},"replayed":true}`},
		{"wrong path", "POST", "/v1/call", ts.auth(), good(), 404, `{"status":"rejected","error_code":"not_found"}`},
		{"wrong method", "GET", CallsPath, ts.auth(), nil, 405, `{"status":"rejected","error_code":"method_not_allowed"}`},
		{"no authorization", "POST", CallsPath, "", good(), 401, unauth},
		{"other scheme", "POST", CallsPath, "Bearer " + ts.auth()[len("Apysup-Credential "):], good(), 401, unauth},
		{"padded credential", "POST", CallsPath, padded, good(), 401, unauth},
		{"standard base64", "POST", CallsPath, "Apysup-Credential " + base64.StdEncoding.EncodeToString(ts.cred), good(), 401, unauth},
		{"malformed", "POST", CallsPath, ts.auth(), strings.NewReader(`{"call":1}`), 400, `{"status":"rejected","error_code":"malformed_envelope"}`},
		{"chunked too large", "POST", CallsPath, ts.auth(), io.MultiReader(strings.NewReader(" "), bytes.NewReader(make([]byte, MaxEnvelopeBytes))), 413, `{"status":"rejected","error_code":"request_too_large"}`},
		{"mismatch", "POST", CallsPath, ts.auth(), bytes.NewReader(envelopeFor(frame("capability-1", "echo.say", `{"a":2}`))), 409, `{"status":"rejected","error_code":"call_identity_mismatch"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ts.do(t, tc.method, tc.path, tc.auth, tc.body)
			if status != tc.status || body != tc.want {
				t.Fatalf("got %d %s\nwant %d %s", status, body, tc.status, tc.want)
			}
		})
	}
	if ts.b.total() != 1 {
		t.Fatalf("%d dispatches", ts.b.total())
	}
}

func TestServerContentLengthTooLarge(t *testing.T) {
	ts := startServer(t, uint32(os.Getuid()), ServerConfig{})
	conn, err := net.Dial("unix", ts.rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = io.WriteString(conn, "POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: "+ts.auth()+"\r\nContent-Length: 2000000\r\n\r\n")
	if err != nil {
		t.Fatal(err)
	}
	head := make([]byte, 4096)
	n, _ := conn.Read(head)
	if !bytes.HasPrefix(head[:n], []byte("HTTP/1.1 413 ")) || !bytes.Contains(head[:n], []byte(CodeRequestTooLarge)) {
		t.Fatalf("%q", head[:n])
	}
}

func TestServerHeaderLimit(t *testing.T) {
	ts := startServer(t, uint32(os.Getuid()), ServerConfig{MaxHeaderBytes: 1 << 10})
	req, _ := http.NewRequest("POST", "http://apysup"+CallsPath, nil)
	req.Header.Set("X-Pad", strings.Repeat("p", 8<<10))
	resp, err := ts.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("status %d", resp.StatusCode)
	}
}

// The peer's uid from SO_PEERCRED must be the run's: a channel opened for
// another uid refuses this process even with the right credential.
func TestServerPeerCredentials(t *testing.T) {
	ts := startServer(t, uint32(os.Getuid())+1, ServerConfig{})
	status, body := ts.do(t, "POST", CallsPath, ts.auth(), bytes.NewReader(envelopeFor(frame("capability-1", "echo.say", `{}`))))
	if status != 401 || body != `{"status":"rejected","error_code":"unauthenticated"}` || ts.b.total() != 0 {
		t.Fatalf("%d %s", status, body)
	}
}

// A dispatch may take far longer than the write timeout (an approval wait);
// the timeout covers writing the answer only.
func TestServerLongDispatchOutlivesWriteTimeout(t *testing.T) {
	ts := startServer(t, uint32(os.Getuid()), ServerConfig{WriteTimeout: 20 * time.Millisecond, ReadTimeout: 20 * time.Millisecond})
	go func() {
		<-ts.b.entered
		time.Sleep(100 * time.Millisecond) // hold the call past both timeouts
		close(ts.b.release)
	}()
	status, body := ts.do(t, "POST", CallsPath, ts.auth(), bytes.NewReader(envelopeFor(frame("capability-1", "fault.block", `{"x":1}`))))
	if status != 200 || !strings.Contains(body, `"result":{"x":1}`) {
		t.Fatalf("%d %s", status, body)
	}
}

func TestRunSocketFiles(t *testing.T) {
	parent := t.TempDir()
	rs, err := ListenRunSocket(parent, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := rs.WriteChannelFile(ChannelFile{Socket: "/run/apysup/rpc.sock", Credential: "c"}); err != nil {
		t.Fatal(err)
	}
	modes := map[string]os.FileMode{rs.Dir: os.ModeDir | 0o700, rs.Path: os.ModeSocket | 0o600, filepath.Join(rs.Dir, ChannelFileName): 0o400}
	for p, want := range modes {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode(), want)
		}
	}
	if err := rs.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

func TestRunSocketOwner(t *testing.T) {
	testenv.NeedRoot(t)
	owner := &Owner{UID: 54321, GID: 54322}
	rs, err := ListenRunSocket(t.TempDir(), owner)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	if err := rs.WriteChannelFile(ChannelFile{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{rs.Dir, rs.Path, filepath.Join(rs.Dir, ChannelFileName)} {
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 54321 || st.Gid != 54322 {
			t.Errorf("%s owned by %d:%d", p, st.Uid, st.Gid)
		}
	}
}

func TestRunSocketPathTooLong(t *testing.T) {
	parent := filepath.Join(t.TempDir(), strings.Repeat("d", 100))
	if err := os.Mkdir(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := ListenRunSocket(parent, nil); err == nil || !strings.Contains(err.Error(), "socket path") {
		t.Fatalf("err %v", err)
	}
	if entries, _ := os.ReadDir(parent); len(entries) != 0 {
		t.Fatalf("left behind: %v", entries)
	}
}

// With one connection allowed, a second client is served once the first
// connection closes.
func TestServerConnectionLimit(t *testing.T) {
	ts := startServer(t, uint32(os.Getuid()), ServerConfig{MaxConnections: 1})
	first, err := net.Dial("unix", ts.rs.Path)
	if err != nil {
		t.Fatal(err)
	}
	req := func(c net.Conn, id string) string {
		body := envelopeFor(frame(id, "echo.say", `{}`))
		fmt.Fprintf(c, "POST /v1/calls HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Length: %d\r\n\r\n%s", ts.auth(), len(body), body)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			return err.Error()
		}
		resp.Body.Close()
		return resp.Status
	}
	if s := req(first, "capability-1"); s != "200 OK" {
		t.Fatal(s)
	}
	second := make(chan string, 1)
	go func() {
		c, err := net.Dial("unix", ts.rs.Path)
		if err != nil {
			second <- err.Error()
			return
		}
		defer c.Close()
		second <- req(c, "capability-2")
	}()
	first.Close()
	if s := <-second; s != "200 OK" {
		t.Fatal(s)
	}
}

// unixPair is two connected Unix sockets as net.Conns.
func unixPair(t *testing.T) (a, b net.Conn) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	conns := make([]net.Conn, 2)
	for i, fd := range fds {
		f := os.NewFile(uintptr(fd), "pair")
		conns[i], err = net.FileConn(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conns[i].Close() })
	}
	return conns[0], conns[1]
}

// A channel connection polls for the next request on its first read after
// an answer, and only there (net/http's background read during a handler
// never polls); a request that comes soon after its answer keeps the
// polling on. The approval server's connections never poll.
func TestPeerConnPollsAfterAnswer(t *testing.T) {
	server, client := unixPair(t)
	var polls atomic.Int64
	polls.Store(1)
	pc := newPeerConn(server, requestSpin, &polls, func() {})
	if pc.rc == nil || !pc.peer.ok {
		t.Fatalf("rc %v, peer %+v", pc.rc, pc.peer)
	}
	buf := make([]byte, 64)
	if _, err := client.Write([]byte("request 1")); err != nil {
		t.Fatal(err)
	}
	if n, err := pc.Read(buf); err != nil || string(buf[:n]) != "request 1" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if pc.spin.On() {
		t.Fatal("polling before any answer")
	}
	if _, err := pc.Write([]byte("answer 1")); err != nil {
		t.Fatal(err)
	}
	if !pc.answered.Load() {
		t.Fatal("the answer was not recorded")
	}
	if _, err := client.Write([]byte("request 2")); err != nil {
		t.Fatal(err)
	}
	if n, err := pc.Read(buf); err != nil || string(buf[:n]) != "request 2" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if pc.answered.Load() || !pc.spin.On() {
		t.Fatalf("after a prompt request: answered %v, polling %v", pc.answered.Load(), pc.spin.On())
	}
	// A read with no answer before it (net/http's background read) blocks
	// at once and leaves the state alone.
	go func() {
		time.Sleep(20 * time.Millisecond)
		_, _ = client.Write([]byte("late"))
	}()
	if n, err := pc.Read(buf); err != nil || string(buf[:n]) != "late" {
		t.Fatalf("read %q, %v", buf[:n], err)
	}
	if !pc.spin.On() {
		t.Fatal("a read that did not poll changed the polling")
	}
	// The budget, one window, goes to request 3's read; request 4's
	// read, over it, blocks at once (spin.TestAdaptiveBudget).
	for i, left := range []int64{0, -1} {
		if _, err := pc.Write([]byte("answer")); err != nil {
			t.Fatal(err)
		}
		req := fmt.Sprintf("request %d", i+3)
		if _, err := client.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		if n, err := pc.Read(buf); err != nil || string(buf[:n]) != req {
			t.Fatalf("read %q, %v", buf[:n], err)
		}
		if polls.Load() != left {
			t.Fatalf("after %s: %d windows left, want %d", req, polls.Load(), left)
		}
	}

	other, _ := unixPair(t)
	if ac := newPeerConn(other, 0, &polls, func() {}); ac.rc != nil {
		t.Fatal("a connection without a spin polls")
	}
}
