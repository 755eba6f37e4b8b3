package main

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A host tool for the exec handler: its behaviour is chosen by the guest's
// "mode" argument, so one tool shows every failure.
const execTool = `import json, sys, time
args = json.load(sys.stdin)
mode = args.get("mode")
if mode == "ok":
    print(json.dumps({"tool": "ok", "n": args.get("n", 0) * 2}))
elif mode == "bad":
    print("this is not json")
elif mode == "fail":
    sys.exit(3)
elif mode == "slow":
    time.sleep(30)
elif mode == "big":
    print(json.dumps({"x": "a" * 100000}))
`

const handlersManifest = `{"schema_version": "apysup.manifest.v1", "max_calls": 32,
 "capabilities": [
  {"name": "tool.run", "version": "1", "effect": "external", "playback": "live",
   "handler": {"kind": "exec", "id": "tool", "version": "1",
               "config": {"argv": ["/usr/bin/python3.11", "@TOOL@"], "timeout": "2s", "max_output_bytes": 4096}},
   "input_schema": {"type": "object"}, "python": {"module": "tool", "function": "run"}},
  {"name": "records.get", "version": "1", "effect": "read", "playback": "captured",
   "handler": {"kind": "http", "id": "records", "version": "1",
               "config": {"method": "GET", "url": "http://@HOST@/records/{id}", "timeout": "2s", "max_body_bytes": 4096}},
   "input_schema": {"type": "object"}, "python": {"module": "records", "function": "get"}},
  {"name": "notes.put", "version": "1", "effect": "write", "playback": "live",
   "handler": {"kind": "kv", "id": "notes-put", "version": "1", "config": {"path": "@DB@", "op": "put"}},
   "input_schema": {"type": "object"}, "python": {"module": "notes", "function": "put"}},
  {"name": "notes.get", "version": "1", "effect": "read", "playback": "live",
   "handler": {"kind": "kv", "id": "notes-get", "version": "1", "config": {"path": "@DB@", "op": "get"}},
   "input_schema": {"type": "object"}, "python": {"module": "notes", "function": "get"}},
  {"name": "notes.list", "version": "1", "effect": "read", "playback": "live",
   "handler": {"kind": "kv", "id": "notes-list", "version": "1", "config": {"path": "@DB@", "op": "list"}},
   "input_schema": {"type": "object"}, "python": {"module": "notes", "function": "list"}}
 ],
 "grants": [{"capability": "tool.run", "policy": {}}, {"capability": "records.get", "policy": {"http": {"allowed_hosts": ["@HOST@"]}}},
            {"capability": "notes.put", "policy": {}}, {"capability": "notes.get", "policy": {}}, {"capability": "notes.list", "policy": {}}]}`

const handlersGuest = `import agent_runtime, tool, records, notes

def attempt(name, fn, **kw):
    try:
        print(name, "ok", fn(**kw))
    except agent_runtime.CapabilityError as e:
        print(name, "refused", e.error_code)

attempt("exec-ok", tool.run, mode="ok", n=21)
for mode in ("bad", "fail", "slow", "big"):
    attempt("exec-" + mode, tool.run, mode=mode)
attempt("http-ok", records.get, id="1")
attempt("http-404", records.get, id="missing")
attempt("http-redirect", records.get, id="moved")
attempt("http-big", records.get, id="big")
attempt("http-slow", records.get, id="slow")
attempt("kv-put", notes.put, key="todo", value=["write docs"])
attempt("kv-get", notes.get, key="todo")
attempt("kv-get-missing", notes.get, key="nope")
attempt("kv-list", notes.list)
attempt("kv-put-bad-key", notes.put, key="", value=1)
`

// Every handler kind, end to end (results are canonical JSON, so keys
// arrive sorted) from a confined guest, with its failure
// modes: each failure reaches the guest as handler_error and writes an
// error receipt; nothing about the host (argv, URL, file) leaks.
func TestHandlerKindsFromAConfinedGuest(t *testing.T) {
	needNative(t)
	mux := http.NewServeMux()
	mux.HandleFunc("/records/1", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"id": "1", "title": "first"}`)
	})
	mux.HandleFunc("/records/moved", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:1/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/records/big", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, strings.Repeat("x", 10000))
	})
	mux.HandleFunc("/records/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(20 * time.Second):
		case <-r.Context().Done():
		}
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://")
	dir := t.TempDir()
	toolPath := filepath.Join(dir, "tool.py")
	os.WriteFile(toolPath, []byte(execTool), 0o644)
	manifest := strings.NewReplacer("@TOOL@", toolPath, "@HOST@", host, "@DB@", filepath.Join(dir, "notes.db")).Replace(handlersManifest)
	m := writeManifest(t, manifest)

	res, code, errOut := runJSON(t, "--plan", m, "--timeout", "60s", script(t, handlersGuest))
	if code != 0 {
		t.Fatalf("exit %d: %s %+v", code, errOut, res)
	}
	want := []string{
		"exec-ok ok {'n': 42, 'tool': 'ok'}",
		"exec-bad refused handler_error",
		"exec-fail refused handler_error",
		"exec-slow refused handler_error",
		"exec-big refused handler_error",
		"http-ok ok {'body': {'id': '1', 'title': 'first'}, 'status': 200}",
		"http-404 ok {'body': '404 page not found\\n', 'status': 404}",
		"http-redirect refused handler_error",
		"http-big refused handler_error",
		"http-slow refused handler_error",
		"kv-put ok {'key': 'todo', 'stored': True}",
		"kv-get ok {'found': True, 'key': 'todo', 'value': ['write docs']}",
		"kv-get-missing ok {'found': False, 'key': 'nope'}",
		"kv-list ok {'keys': ['todo'], 'truncated': False}",
		"kv-put-bad-key refused handler_error",
	}
	if got := strings.Split(strings.TrimSpace(res.Stdout), "\n"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("guest saw:\n%s\nwant:\n%s\nstderr: %s", res.Stdout, strings.Join(want, "\n"), res.Stderr)
	}
	errors := 0
	for _, r := range res.Receipts {
		if r.Outcome == "error" {
			errors++
			if r.ErrorCode != "handler_error" || r.ResponseSHA256 != "" {
				t.Errorf("error receipt %+v", r)
			}
		}
	}
	if errors != 8 || len(res.Receipts) != len(want) {
		t.Fatalf("%d error receipts of %d", errors, len(res.Receipts))
	}
	out, _, _ := run(t, "run", "--json", "--plan", m, script(t, handlersGuest))
	for _, secret := range []string{toolPath, host, "notes.db"} {
		if strings.Contains(out, secret) {
			t.Errorf("run output shows the host's %q", secret)
		}
	}
}

// A destination the grant does not allow is refused before anything runs.
func TestHTTPHandlerRefusesUngrantedHost(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	other := l.Addr().String()
	manifest := strings.NewReplacer("@TOOL@", "/bin/true", "@DB@", filepath.Join(t.TempDir(), "n.db")).Replace(handlersManifest)
	manifest = strings.Replace(manifest, `"url": "http://@HOST@/records/{id}"`, `"url": "http://`+other+`/records/{id}"`, 1)
	manifest = strings.ReplaceAll(manifest, "@HOST@", "127.0.0.1:9")
	_, errOut, code := run(t, "run", "--plan", writeManifest(t, manifest), script(t, "print('never')\n"))
	if code != 2 || !strings.Contains(errOut, "allowed_hosts") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
}
