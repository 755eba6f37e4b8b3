package handlers

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
)

// testServer answers the paths the http tests use, on 127.0.0.1.
func testServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/echo/", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		json.NewEncoder(w).Encode(map[string]string{
			"method": r.Method, "path": r.URL.EscapedPath(), "query": r.URL.RawQuery, "body": string(body),
			"content_type": r.Header.Get("Content-Type"), "api_key": r.Header.Get("X-Api-Key"),
			"encoding": r.Header.Get("Accept-Encoding"),
		})
	})
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		io.WriteString(w, "hello <world>\n")
	})
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // no sniffing: no Content-Type at all
		io.WriteString(w, "raw")
	})
	mux.HandleFunc("/badjson", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"a":1,"a":2}`)
	})
	mux.HandleFunc("/vnd", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.apysup+json")
		io.WriteString(w, `[1, 2.50, "x"]`)
	})
	mux.HandleFunc("/latin1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
		w.Write([]byte("caf\xe9"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		io.WriteString(w, `{"error":"no such city"}`)
	})
	mux.HandleFunc("/redirect", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/text", http.StatusFound)
	})
	mux.HandleFunc("/redirect-away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, strings.Repeat("x", 2000))
	})
	mux.HandleFunc("/gzip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Content-Encoding", "gzip")
		w.Write([]byte("\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\xff"))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

func httpCapability(name, method, url, hostport, extra string) capability {
	return capability{name: name, kind: "http", playback: "captured",
		config: `{"method":"` + method + `","url":"` + url + `"` + extra + `}`,
		policy: `{"http":{"allowed_hosts":["` + hostport + `"]}}`}
}

func TestHTTP(t *testing.T) {
	srv, host := testServer(t)
	tests := []struct {
		name, method, path, extra, args string
		status                          int
		mediaType                       string
		body                            string // the result's body member, canonical
	}{
		{"path placeholder escaped", "GET", "/echo/{city}", ``, `{"city":"São Paulo/x"}`, 200, "application/json",
			`{"api_key":"","body":"","content_type":"","encoding":"","method":"GET","path":"/echo/S%C3%A3o%20Paulo%2Fx","query":""}`},
		{"query placeholder escaped", "GET", "/echo/w?city={city}&n={n}", ``, `{"city":"a&b=c","n":2.5}`, 200, "application/json",
			`{"api_key":"","body":"","content_type":"","encoding":"","method":"GET","path":"/echo/w","query":"city=a%26b%3Dc&n=2.5"}`},
		{"number placeholder", "DELETE", "/echo/{id}", ``, `{"id":42}`, 200, "application/json",
			`{"api_key":"","body":"","content_type":"","encoding":"","method":"DELETE","path":"/echo/42","query":""}`},
		{"post body is the other arguments", "POST", "/echo/{city}", ``, `{"city":"Oslo","days":3,"units":"metric"}`, 200, "application/json",
			`{"api_key":"","body":"{\"days\":3,\"units\":\"metric\"}","content_type":"application/json","encoding":"","method":"POST","path":"/echo/Oslo","query":""}`},
		{"post with only placeholders", "PUT", "/echo/{city}", ``, `{"city":"Oslo"}`, 200, "application/json",
			`{"api_key":"","body":"{}","content_type":"application/json","encoding":"","method":"PUT","path":"/echo/Oslo","query":""}`},
		{"configured headers", "PATCH", "/echo/x", `,"headers":{"x-api-key":"k-123","Content-Type":"application/merge-patch+json"}`, `{"a":null}`, 200, "application/json",
			`{"api_key":"k-123","body":"{\"a\":null}","content_type":"application/merge-patch+json","encoding":"","method":"PATCH","path":"/echo/x","query":""}`},
		{"text body", "GET", "/text", ``, `{}`, 200, "text/plain", `"hello <world>\n"`},
		{"no content type", "GET", "/untyped", ``, `{}`, 200, "application/octet-stream", `"raw"`},
		{"JSON type, not strict JSON", "GET", "/badjson", ``, `{}`, 200, "application/json", `"{\"a\":1,\"a\":2}"`},
		{"+json media type", "GET", "/vnd", ``, `{}`, 200, "application/vnd.apysup+json", `[1,2.5,"x"]`},
		{"error status is a result", "GET", "/missing", ``, `{}`, 404, "application/json", `{"error":"no such city"}`},
		{"body exactly at the bound", "GET", "/big", `,"max_body_bytes":2000`, `{}`, 200, "text/plain", `"` + strings.Repeat("x", 2000) + `"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handlerOf(t, Options{}, httpCapability("web.get", tc.method, srv.URL+tc.path, host, tc.extra)).(broker.EvidenceHandler)
			out, ev, err := h.CallWithEvidence(context.Background(), json.RawMessage(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			canon, err := canonjson.Canonical(out)
			if err != nil {
				t.Fatalf("result not strict JSON: %s", out)
			}
			var got struct {
				Status int             `json:"status"`
				Body   json.RawMessage `json:"body"`
			}
			if err := canonjson.DecodeStrict(canon, canonjson.MaxHostBytes, &got); err != nil {
				t.Fatal(err)
			}
			if got.Status != tc.status || string(got.Body) != tc.body {
				t.Fatalf("got %d %s\nwant %d %s", got.Status, got.Body, tc.status, tc.body)
			}
			if ev.Kind != "http" || ev.Status != tc.status || ev.MediaType != tc.mediaType {
				t.Fatalf("evidence %+v", ev)
			}
			if ev.BodyBytes <= 0 || !canonjson.IsDigest(ev.BodySHA256) {
				t.Fatalf("evidence body %+v", ev)
			}
		})
	}
}

// TestHTTPEvidenceIsOfTheBytesReceived: body_bytes and body_sha256 are of
// the raw body of this very response, not of the result.
func TestHTTPEvidenceIsOfTheBytesReceived(t *testing.T) {
	srv, host := testServer(t)
	h := handlerOf(t, Options{}, httpCapability("web.get", "GET", srv.URL+"/vnd", host, ``)).(broker.EvidenceHandler)
	_, ev, err := h.CallWithEvidence(context.Background(), json.RawMessage(`{}`))
	raw := `[1, 2.50, "x"]`
	if err != nil || ev.BodyBytes != int64(len(raw)) || ev.BodySHA256 != canonjson.PlainDigest([]byte(raw)) {
		t.Fatalf("%+v %v", ev, err)
	}
}

func TestHTTPFailures(t *testing.T) {
	srv, host := testServer(t)
	tests := []struct {
		name, method, path, extra, args, code string
	}{
		{"missing placeholder", "GET", "/echo/{city}", ``, `{}`, CodeHTTPMissingPlaceholder},
		{"placeholder not a string", "GET", "/echo/{city}", ``, `{"city":true}`, CodeHTTPBadArgument},
		{"placeholder an object", "GET", "/echo/{city}", ``, `{"city":{"a":1}}`, CodeHTTPBadArgument},
		{"placeholder null", "GET", "/echo/{city}", ``, `{"city":null}`, CodeHTTPBadArgument},
		{"placeholder empty", "GET", "/echo/{city}", ``, `{"city":""}`, CodeHTTPBadArgument},
		{"placeholder dot-dot", "GET", "/echo/{city}", ``, `{"city":".."}`, CodeHTTPBadArgument},
		{"placeholder too long", "GET", "/echo/{city}", ``, `{"city":"` + strings.Repeat("a", 1025) + `"}`, CodeHTTPBadArgument},
		{"unused argument without a body", "GET", "/echo/{city}", ``, `{"city":"x","extra":1}`, CodeHTTPBadArgument},
		{"arguments not an object", "GET", "/text", ``, `[]`, CodeBadArguments},
		{"arguments not strict", "GET", "/echo/{city}", ``, `{"city":"a","city":"b"}`, CodeBadArguments},
		{"redirect", "GET", "/redirect", ``, `{}`, CodeHTTPRedirectRefused},
		{"redirect to another host", "GET", "/redirect-away", ``, `{}`, CodeHTTPRedirectRefused},
		{"body over the bound", "GET", "/big", `,"max_body_bytes":1999`, `{}`, CodeHTTPBodyTooLarge},
		{"body not UTF-8", "GET", "/latin1", ``, `{}`, CodeHTTPBodyNotUTF8},
		{"compressed body is bytes, not text", "GET", "/gzip", ``, `{}`, CodeHTTPBodyNotUTF8},
		{"timeout", "GET", "/slow", `,"timeout":"50ms"`, `{}`, CodeHTTPTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := handlerOf(t, Options{}, httpCapability("web.get", tc.method, srv.URL+tc.path, host, tc.extra)).(broker.EvidenceHandler)
			out, ev, err := h.CallWithEvidence(context.Background(), json.RawMessage(tc.args))
			if CodeOf(err) != tc.code || out != nil || ev != (broker.TransportEvidence{}) {
				t.Fatalf("got %s %+v %v, want %s", out, ev, err, tc.code)
			}
			if strings.Contains(err.Error(), "127.0.0.1") || strings.Contains(err.Error(), "/") {
				t.Fatalf("error names the endpoint: %v", err)
			}
		})
	}
}

// TestHTTPHostRefused: the final URL is checked against the grant before
// any connection, and the dialer refuses any address the grant does not
// list, whatever asked for it.
func TestHTTPHostRefused(t *testing.T) {
	srv, host := testServer(t)
	_, port, _ := net.SplitHostPort(host)

	t.Run("final URL not granted", func(t *testing.T) {
		h := handlerOf(t, Options{}, httpCapability("web.get", "GET", srv.URL+"/text", host, ``)).(*httpHandler)
		h.allowed = allowedHosts{"127.0.0.1:1": true} // as if the grant had changed under a built handler
		if _, _, err := h.CallWithEvidence(context.Background(), json.RawMessage(`{}`)); CodeOf(err) != CodeHTTPHostRefused {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("dialer refuses what the grant does not list", func(t *testing.T) {
		b := &builder{}
		defer b.Close()
		h := handlerOf(t, Options{}, httpCapability("web.get", "GET", srv.URL+"/text", host, ``)).(*httpHandler)
		h.client = b.httpClient(allowedHosts{"127.0.0.1:1": true})
		if _, _, err := h.CallWithEvidence(context.Background(), json.RawMessage(`{}`)); CodeOf(err) != CodeHTTPHostRefused {
			t.Fatalf("got %v", err)
		}
	})

	allowed := allowedHosts{"127.0.0.1:" + port: true, "localhost:" + port: true}
	dials := []struct {
		network, addr string
		ok            bool
	}{
		{"tcp", "127.0.0.1:" + port, true},
		{"tcp", "LOCALHOST:" + port, true}, // host names compare case-insensitively; it resolves, then connects to what it resolved
		{"tcp", "127.0.0.1:1", false},
		{"tcp", "127.0.0.2:" + port, false},
		{"tcp", "[::1]:" + port, false},
		{"tcp", "0.0.0.0:" + port, false},
		{"udp", "127.0.0.1:" + port, false},
		{"tcp", "127.0.0.1", false},
	}
	for _, d := range dials {
		conn, err := allowed.dial(context.Background(), d.network, d.addr)
		if d.ok != (err == nil) {
			t.Errorf("dial %s %s: %v", d.network, d.addr, err)
		}
		if err == nil {
			if conn.RemoteAddr().String() != "127.0.0.1:"+port {
				t.Errorf("dial %s connected to %s", d.addr, conn.RemoteAddr())
			}
			conn.Close()
		} else if !d.ok && !errors.Is(err, errHostRefused) {
			t.Errorf("dial %s: %v, want a refusal before connecting", d.addr, err)
		}
	}
	// An unspecified address is never dialled, even when granted.
	if _, err := (allowedHosts{"0.0.0.0:" + port: true}).dial(context.Background(), "tcp", "0.0.0.0:"+port); !errors.Is(err, errHostRefused) {
		t.Errorf("dial 0.0.0.0: %v", err)
	}
}

func TestHTTPCancel(t *testing.T) {
	arrived := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		close(arrived)
		<-r.Context().Done()
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	h := handlerOf(t, Options{}, httpCapability("web.get", "GET", srv.URL+"/", host, ``)).(broker.EvidenceHandler)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := h.CallWithEvidence(ctx, json.RawMessage(`{}`))
		done <- err
	}()
	<-arrived
	cancel()
	if err := <-done; CodeOf(err) != CodeCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if _, _, err := h.CallWithEvidence(ctx, json.RawMessage(`{}`)); CodeOf(err) != CodeCancelled {
		t.Fatalf("already cancelled: %v", err)
	}
}

func TestHTTPConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := l.Addr().String()
	l.Close() // nobody listens there now
	h := handlerOf(t, Options{}, httpCapability("web.get", "GET", "http://"+host+"/", host, ``)).(broker.EvidenceHandler)
	if _, _, err := h.CallWithEvidence(context.Background(), json.RawMessage(`{}`)); CodeOf(err) != CodeHTTPFailed || strings.Contains(err.Error(), host) {
		t.Fatalf("got %v", err)
	}
}

// TestHTTPSVerifiesCertificates: https uses the system's roots; a server
// they do not vouch for is a failure, never an unverified success.
func TestHTTPSVerifiesCertificates(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "secret") }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
	srv.StartTLS()
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "https://")
	h := handlerOf(t, Options{}, httpCapability("web.get", "GET", srv.URL+"/", host, ``)).(broker.EvidenceHandler)
	if out, _, err := h.CallWithEvidence(context.Background(), json.RawMessage(`{}`)); CodeOf(err) != CodeHTTPFailed || out != nil {
		t.Fatalf("got %s %v", out, err)
	}
}

// TestHTTPThroughBroker: a captured call records the handler's evidence in
// the transcript; a failure is handler_error with no result.
func TestHTTPThroughBroker(t *testing.T) {
	srv, host := testServer(t)
	b := runBroker(t, Options{},
		httpCapability("web.text", "GET", srv.URL+"/text", host, ``),
		capability{name: "web.weather", kind: "http", id: "weather", playback: "captured",
			config: `{"method":"GET","url":"` + srv.URL + `/echo/{city}"}`, policy: `{"http":{"allowed_hosts":["` + host + `"]}}`})
	r := brokerCall(t, b, 1, "web.text", `{}`)
	if result, _ := canonjson.Canonical(r.Result); r.Status != "ok" || string(result) != `{"body":"hello <world>\n","status":200}` {
		t.Fatalf("ok: %+v %s", r, r.Result)
	}
	tr := b.Transcript()
	raw := "hello <world>\n"
	if len(tr) != 1 || tr[0].Evidence != (broker.TransportEvidence{Kind: "http", Status: 200, MediaType: "text/plain",
		BodyBytes: int64(len(raw)), BodySHA256: canonjson.PlainDigest([]byte(raw))}) {
		t.Fatalf("transcript %+v", tr)
	}
	if r := brokerCall(t, b, 2, "web.weather", `{}`); r.Status != "error" || r.ErrorCode != "handler_error" {
		t.Fatalf("missing placeholder: %+v", r)
	}
	if len(b.Transcript()) != 1 {
		t.Fatal("a failed call entered the transcript")
	}
}
