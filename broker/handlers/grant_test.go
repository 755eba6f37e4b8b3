package handlers

import (
	"context"
	"encoding/json"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/plan"
)

func withPolicy(c capability, policy string) capability {
	c.policy = policy
	return c
}

// A kv grant's key_prefix: the Broker refuses a key or list prefix outside
// it before dispatch (grant_denied, naming /key or /prefix), a list without
// prefix sees only the keys under it, and the handler itself refuses what
// the Broker would have (kv_key_not_granted).
func TestKVGrantKeyPrefix(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	const grant = `{"kv":{"namespace":"notes","key_prefix":"team/"}}`
	b := runBroker(t, Options{},
		withPolicy(kvCapability("notes.put", file, KVPut, "notes"), grant),
		withPolicy(kvCapability("notes.get", file, KVGet, "notes"), grant),
		withPolicy(kvCapability("notes.list", file, KVList, "notes"), grant),
		capability{name: "admin.put", kind: "kv", id: "admin", effect: "write", config: `{"path":"` + file + `","op":"put","namespace":"notes"}`})
	steps := []struct {
		capability, args, status, code, message, result string
	}{
		{"admin.put", `{"key":"private","value":1}`, "ok", "", "", `{"key":"private","stored":true}`},
		{"notes.put", `{"key":"team/a","value":2}`, "ok", "", "", `{"key":"team/a","stored":true}`},
		{"notes.put", `{"key":"private","value":3}`, "refused", "grant_denied", "the capability's grant does not allow the argument at /key", ""},
		{"notes.get", `{"key":"private"}`, "refused", "grant_denied", "the capability's grant does not allow the argument at /key", ""},
		{"notes.get", `{"key":"team/a"}`, "ok", "", "", `{"found":true,"key":"team/a","value":2}`},
		{"notes.list", `{}`, "ok", "", "", `{"keys":["team/a"],"truncated":false}`},
		{"notes.list", `{"prefix":"team/"}`, "ok", "", "", `{"keys":["team/a"],"truncated":false}`},
		{"notes.list", `{"prefix":"te"}`, "refused", "grant_denied", "the capability's grant does not allow the argument at /prefix", ""},
		{"notes.list", `{"prefix":""}`, "refused", "grant_denied", "the capability's grant does not allow the argument at /prefix", ""},
		{"notes.get", `{"key":7}`, "error", "handler_error", "the handler reported an error", ""}, // not a key at all: the call's failure, not the grant's
	}
	for i, st := range steps {
		r := brokerCall(t, b, i+1, st.capability, st.args)
		if r.Status != st.status || r.ErrorCode != st.code || (st.message != "" && r.Message != st.message) || (st.result != "" && string(r.Result) != st.result) {
			t.Fatalf("%s %s: got %+v %s", st.capability, st.args, r, r.Result)
		}
		if strings.Contains(r.Message, "team") || strings.Contains(r.Message, "private") {
			t.Fatalf("the message shows the grant or the key: %q", r.Message)
		}
	}
	// The stored value was not changed by the refused put.
	if r := brokerCall(t, b, 99, "notes.get", `{"key":"team/a"}`); string(r.Result) != `{"found":true,"key":"team/a","value":2}` {
		t.Fatalf("%s", r.Result)
	}

	// Below the Broker the handler holds the same line.
	for _, tc := range []struct{ op, args string }{
		{KVGet, `{"key":"private"}`}, {KVPut, `{"key":"private","value":1}`}, {KVList, `{"prefix":"x"}`},
	} {
		h := handlerOf(t, Options{}, withPolicy(kvCapability("kv."+tc.op, file, tc.op, "notes"), grant)).(*kvHandler)
		if out, err := h.Call(context.Background(), json.RawMessage(tc.args)); CodeOf(err) != CodeKVKeyNotGranted || out != nil {
			t.Fatalf("%s %s: %s %v", tc.op, tc.args, out, err)
		}
		var checker broker.GrantChecker = h
		var args any
		_ = json.Unmarshal([]byte(tc.args), &args)
		if _, ok := checker.CheckGrant(args); ok {
			t.Fatalf("%s %s passed the grant check", tc.op, tc.args)
		}
	}
}

// A kv grant's namespace and read_only bound the config (Build refuses a
// config outside them: TestBuildProblems); within them the handler works.
func TestKVGrantNamespaceAndReadOnly(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	b := runBroker(t, Options{},
		withPolicy(kvCapability("notes.get", file, KVGet, "notes"), `{"kv":{"namespace":"notes","read_only":true}}`),
		withPolicy(kvCapability("notes.put", file, KVPut, "notes"), `{"kv":{"namespace":"notes"}}`))
	if r := brokerCall(t, b, 1, "notes.put", `{"key":"a","value":1}`); r.Status != "ok" {
		t.Fatalf("%+v", r)
	}
	if r := brokerCall(t, b, 2, "notes.get", `{"key":"a"}`); r.Status != "ok" || string(r.Result) != `{"found":true,"key":"a","value":1}` {
		t.Fatalf("%+v", r)
	}
}

// An exec grant: the command must be one it lists and the timeout within
// its max_timeout (Build: TestBuildProblems); the arguments schema bounds
// what reaches the command's stdin.
func TestExecGrant(t *testing.T) {
	b := runBroker(t, Options{}, capability{name: "tool.run", kind: "exec", config: `{"argv":["/bin/cat"],"timeout":"2s"}`,
		policy: `{"exec":{"commands":["/bin/cat","/usr/bin/jq"],"max_timeout":"5s"},"arguments":{"properties":{"mode":{"enum":["read"]}}},"max_calls":2}`})
	if r := brokerCall(t, b, 1, "tool.run", `{"mode":"read"}`); r.Status != "ok" || string(r.Result) != `{"mode":"read"}` {
		t.Fatalf("%+v", r)
	}
	if r := brokerCall(t, b, 2, "tool.run", `{"mode":"delete"}`); r.ErrorCode != "grant_denied" || r.Message != "the capability's grant does not allow the argument at /mode" {
		t.Fatalf("%+v", r)
	}
	if r := brokerCall(t, b, 3, "tool.run", `{}`); r.Status != "ok" {
		t.Fatalf("%+v", r)
	}
	if r := brokerCall(t, b, 4, "tool.run", `{}`); r.ErrorCode != "grant_denied" {
		t.Fatalf("max_calls: %+v", r)
	}
}

// An http grant's methods and path_prefixes bound the config; within them
// requests go out, and the final URL is checked against the prefixes again.
func TestHTTPGrantSections(t *testing.T) {
	srv, host := testServer(t)
	c := httpCapability("web.echo", "GET", srv.URL+"/echo/{city}", host, ``)
	c.policy = `{"http":{"allowed_hosts":["` + host + `"],"methods":["GET"],"path_prefixes":["/echo"]},"arguments":{"properties":{"city":{"enum":["Oslo"]}}}}`
	b := runBroker(t, Options{}, c)
	if r := brokerCall(t, b, 1, "web.echo", `{"city":"Oslo"}`); r.Status != "ok" || !strings.Contains(string(r.Result), `"path":"/echo/Oslo"`) {
		t.Fatalf("%+v %s", r, r.Result)
	}
	if r := brokerCall(t, b, 2, "web.echo", `{"city":"Paris"}`); r.ErrorCode != "grant_denied" {
		t.Fatalf("%+v", r)
	}
	h := handlerOf(t, Options{}, c).(*httpHandler)
	h.grant = &plan.HTTPGrant{AllowedHosts: h.grant.AllowedHosts, PathPrefixes: []string{"/other/"}} // as if the grant had changed under a built handler
	if _, _, err := h.request(json.RawMessage(`{"city":"Oslo"}`)); CodeOf(err) != CodeHTTPPathRefused {
		t.Fatalf("got %v", err)
	}
	// Placeholders only in the query: the whole path is fixed and checked.
	q := httpCapability("web.q", "GET", srv.URL+"/echo/w?city={city}", host, ``)
	q.policy = `{"http":{"allowed_hosts":["` + host + `"],"path_prefixes":["/echo/w"]}}`
	if r := brokerCall(t, runBroker(t, Options{}, q), 1, "web.q", `{"city":"a/../b"}`); r.Status != "ok" || !strings.Contains(string(r.Result), `"query":"city=`+url.QueryEscape("a/../b")+`"`) {
		t.Fatalf("%+v %s", r, r.Result)
	}
}
