package handlers

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// TestBuildProblems covers every refusal of Build, each with its code and
// manifest path.
func TestBuildProblems(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "kv.db")
	notExec := filepath.Join(dir, "plain")
	if err := os.WriteFile(notExec, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	const hosts = `{"http":{"allowed_hosts":["127.0.0.1:8080"]}}`
	httpCfg := func(extra string) string {
		return `{"method":"GET","url":"http://127.0.0.1:8080/w/{city}"` + extra + `}`
	}
	cfgPath := "capabilities[0].handler.config"
	tests := []struct {
		name       string
		cap        capability
		code, path string
	}{
		{"builtin echo with config", capability{kind: "builtin", id: "echo", config: `{"x":1}`}, CodeInvalidConfig, cfgPath + ".x"},
		{"builtin unknown", capability{kind: "builtin", id: "sleep", config: `{}`}, CodeUnknownHandler, "capabilities[0].handler.id"},
		{"builtin captured", capability{kind: "builtin", id: "echo", playback: "captured"}, CodeHandlerMismatch, "capabilities[0].handler.kind"},
		{"unknown kind", capability{kind: "ftp"}, CodeUnknownHandler, "capabilities[0].handler.kind"},

		{"exec unknown field", capability{kind: "exec", config: `{"argv":["/bin/cat"],"shell":true}`}, CodeInvalidConfig, cfgPath + ".shell"},
		{"exec no argv", capability{kind: "exec", config: `{}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec empty argv", capability{kind: "exec", config: `{"argv":[]}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec argv not strings", capability{kind: "exec", config: `{"argv":["/bin/cat",1]}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec relative argv0", capability{kind: "exec", config: `{"argv":["cat"]}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec unclean argv0", capability{kind: "exec", config: `{"argv":["/bin/../bin/cat"]}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec missing argv0", capability{kind: "exec", config: `{"argv":["/nonexistent/tool"]}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec argv0 not executable", capability{kind: "exec", config: `{"argv":["` + notExec + `"]}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec argv0 directory", capability{kind: "exec", config: `{"argv":["/bin"]}`}, CodeInvalidConfig, cfgPath + ".argv"},
		{"exec bad timeout", capability{kind: "exec", config: `{"argv":["/bin/cat"],"timeout":"soon"}`}, CodeInvalidConfig, cfgPath + ".timeout"},
		{"exec timeout too long", capability{kind: "exec", config: `{"argv":["/bin/cat"],"timeout":"2h"}`}, CodeInvalidConfig, cfgPath + ".timeout"},
		{"exec timeout number", capability{kind: "exec", config: `{"argv":["/bin/cat"],"timeout":5}`}, CodeInvalidConfig, cfgPath + ".timeout"},
		{"exec output zero", capability{kind: "exec", config: `{"argv":["/bin/cat"],"max_output_bytes":0}`}, CodeInvalidConfig, cfgPath + ".max_output_bytes"},
		{"exec output too big", capability{kind: "exec", config: `{"argv":["/bin/cat"],"max_output_bytes":2097152}`}, CodeInvalidConfig, cfgPath + ".max_output_bytes"},
		{"exec output fraction", capability{kind: "exec", config: `{"argv":["/bin/cat"],"max_output_bytes":1.5}`}, CodeInvalidConfig, cfgPath + ".max_output_bytes"},
		{"exec env name", capability{kind: "exec", config: `{"argv":["/bin/cat"],"env":{"A=B":"x"}}`}, CodeInvalidConfig, cfgPath + ".env"},
		{"exec env not strings", capability{kind: "exec", config: `{"argv":["/bin/cat"],"env":{"A":1}}`}, CodeInvalidConfig, cfgPath + ".env"},
		{"exec relative dir", capability{kind: "exec", config: `{"argv":["/bin/cat"],"dir":"tmp"}`}, CodeInvalidConfig, cfgPath + ".dir"},
		{"exec missing dir", capability{kind: "exec", config: `{"argv":["/bin/cat"],"dir":"/nonexistent"}`}, CodeInvalidConfig, cfgPath + ".dir"},
		{"exec captured", capability{kind: "exec", playback: "captured", config: `{"argv":["/bin/cat"]}`}, CodeHandlerMismatch, "capabilities[0].handler.kind"},

		{"http live", capability{kind: "http", config: httpCfg(""), policy: hosts}, CodeHandlerMismatch, "capabilities[0].handler.kind"},
		{"http unknown field", capability{kind: "http", playback: "captured", config: httpCfg(`,"follow":true`), policy: hosts}, CodeInvalidConfig, cfgPath + ".follow"},
		{"http bad method", capability{kind: "http", playback: "captured", config: `{"method":"TRACE","url":"http://127.0.0.1:8080/"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".method"},
		{"http no url", capability{kind: "http", playback: "captured", config: `{"method":"GET"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http placeholder in host", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://{host}:8080/"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http placeholder in port", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:{port}/"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http bad scheme", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"file:///etc/passwd"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http relative url", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"/w/{city}"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http user info", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://u:p@127.0.0.1:8080/"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http fragment", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:8080/#x"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http unbalanced brace", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:8080/{city"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http bad placeholder name", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:8080/{City}"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http host header", capability{kind: "http", playback: "captured", config: httpCfg(`,"headers":{"Host":"evil"}`), policy: hosts}, CodeInvalidConfig, cfgPath + ".headers"},
		{"http header newline", capability{kind: "http", playback: "captured", config: httpCfg(`,"headers":{"X-A":"a\r\nB: c"}`), policy: hosts}, CodeInvalidConfig, cfgPath + ".headers"},
		{"http bad timeout", capability{kind: "http", playback: "captured", config: httpCfg(`,"timeout":"0s"`), policy: hosts}, CodeInvalidConfig, cfgPath + ".timeout"},
		{"http bad body bound", capability{kind: "http", playback: "captured", config: httpCfg(`,"max_body_bytes":-1`), policy: hosts}, CodeInvalidConfig, cfgPath + ".max_body_bytes"},
		{"http policy without section", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{}`}, plan.CodeInvalidGrant, "grants[0].policy.http"},
		{"http policy old shape", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{"allowed_hosts":["127.0.0.1:8080"]}`}, plan.CodeInvalidGrant, "grants[0].policy.allowed_hosts"},
		{"http policy without hosts", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{"http":{}}`}, plan.CodeInvalidGrant, "grants[0].policy.http.allowed_hosts"},
		{"http policy empty hosts", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{"http":{"allowed_hosts":[]}}`}, plan.CodeInvalidGrant, "grants[0].policy.http.allowed_hosts"},
		{"http policy host without port", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{"http":{"allowed_hosts":["127.0.0.1"]}}`}, plan.CodeInvalidGrant, "grants[0].policy.http.allowed_hosts[0]"},
		{"http policy port zero", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{"http":{"allowed_hosts":["127.0.0.1:0"]}}`}, plan.CodeInvalidGrant, "grants[0].policy.http.allowed_hosts[0]"},
		{"http policy unknown field", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{"http":{"allowed_hosts":["127.0.0.1:8080"],"allow_all":true}}`}, plan.CodeInvalidGrant, "grants[0].policy.http.allow_all"},
		{"http policy for another kind", capability{kind: "exec", config: `{"argv":["/bin/cat"]}`, policy: hosts}, plan.CodeInvalidGrant, "grants[0].policy.http"},
		{"http url host not granted", capability{kind: "http", playback: "captured", config: httpCfg(""), policy: `{"http":{"allowed_hosts":["127.0.0.1:8081"]}}`}, CodeNotGranted, cfgPath + ".url"},
		{"http default port not granted", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1/"}`, policy: hosts}, CodeNotGranted, cfgPath + ".url"},
		{"http method not granted", capability{kind: "http", playback: "captured", config: `{"method":"POST","url":"http://127.0.0.1:8080/w/{city}"}`,
			policy: `{"http":{"allowed_hosts":["127.0.0.1:8080"],"methods":["GET"]}}`}, CodeNotGranted, cfgPath + ".method"},
		{"http path not granted", capability{kind: "http", playback: "captured", config: httpCfg(""),
			policy: `{"http":{"allowed_hosts":["127.0.0.1:8080"],"path_prefixes":["/records/"]}}`}, CodeNotGranted, cfgPath + ".url"},
		{"http path prefix continued by a placeholder", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:8080/w{city}"}`,
			policy: `{"http":{"allowed_hosts":["127.0.0.1:8080"],"path_prefixes":["/w"]}}`}, CodeNotGranted, cfgPath + ".url"},
		{"http placeholder before the prefix", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:8080/{section}/w"}`,
			policy: `{"http":{"allowed_hosts":["127.0.0.1:8080"],"path_prefixes":["/w/"]}}`}, CodeNotGranted, cfgPath + ".url"},
		{"http dot segment", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:8080/w/{city}/../../admin"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},
		{"http encoded dot segment", capability{kind: "http", playback: "captured", config: `{"method":"GET","url":"http://127.0.0.1:8080/w/%2e%2e/admin"}`, policy: hosts}, CodeInvalidConfig, cfgPath + ".url"},

		{"kv unknown field", capability{kind: "kv", config: `{"path":"` + db + `","op":"get","mode":"rw"}`}, CodeInvalidConfig, cfgPath + ".mode"},
		{"kv no path", capability{kind: "kv", config: `{"op":"get"}`}, CodeInvalidConfig, cfgPath + ".path"},
		{"kv relative path", capability{kind: "kv", config: `{"path":"kv.db","op":"get"}`}, CodeInvalidConfig, cfgPath + ".path"},
		{"kv query in path", capability{kind: "kv", config: `{"path":"` + db + `?mode=ro","op":"get"}`}, CodeInvalidConfig, cfgPath + ".path"},
		{"kv missing directory", capability{kind: "kv", config: `{"path":"/nonexistent/kv.db","op":"get"}`}, CodeInvalidConfig, cfgPath + ".path"},
		{"kv bad op", capability{kind: "kv", config: `{"path":"` + db + `","op":"delete"}`}, CodeInvalidConfig, cfgPath + ".op"},
		{"kv bad namespace", capability{kind: "kv", config: `{"path":"` + db + `","op":"get","namespace":"Notes"}`}, CodeInvalidConfig, cfgPath + ".namespace"},
		{"kv put on read capability", capability{kind: "kv", effect: "read", config: `{"path":"` + db + `","op":"put"}`}, CodeHandlerMismatch, cfgPath + ".op"},
		{"kv put on external capability", capability{kind: "kv", effect: "external", config: `{"path":"` + db + `","op":"put"}`}, CodeHandlerMismatch, cfgPath + ".op"},
		{"kv file not a database", capability{kind: "kv", config: `{"path":"` + notExec + `","op":"get"}`}, CodeHandlerSetup, cfgPath + ".path"},
		{"kv path a directory", capability{kind: "kv", config: `{"path":"` + dir + `","op":"get"}`}, CodeHandlerSetup, cfgPath + ".path"},
		{"kv captured", capability{kind: "kv", playback: "captured", config: `{"path":"` + db + `","op":"get"}`}, CodeHandlerMismatch, "capabilities[0].handler.kind"},
		{"kv namespace not granted", capability{kind: "kv", config: `{"path":"` + db + `","op":"get","namespace":"other"}`, policy: `{"kv":{"namespace":"notes"}}`}, CodeNotGranted, cfgPath + ".namespace"},
		{"kv default namespace not granted", capability{kind: "kv", config: `{"path":"` + db + `","op":"get"}`, policy: `{"kv":{"namespace":"notes"}}`}, CodeNotGranted, cfgPath + ".namespace"},
		{"kv put under read_only", capability{kind: "kv", effect: "write", config: `{"path":"` + db + `","op":"put"}`, policy: `{"kv":{"read_only":true}}`}, CodeNotGranted, cfgPath + ".op"},
		{"kv policy unknown field", capability{kind: "kv", config: `{"path":"` + db + `","op":"get"}`, policy: `{"kv":{"prefix":"a/"}}`}, plan.CodeInvalidGrant, "grants[0].policy.kv.prefix"},
		{"kv policy for another kind", capability{kind: "kv", config: `{"path":"` + db + `","op":"get"}`, policy: `{"exec":{}}`}, plan.CodeInvalidGrant, "grants[0].policy.exec"},

		{"exec command not granted", capability{kind: "exec", config: `{"argv":["/bin/cat"]}`, policy: `{"exec":{"commands":["/usr/bin/jq"]}}`}, CodeNotGranted, cfgPath + ".argv"},
		{"exec timeout over the grant", capability{kind: "exec", config: `{"argv":["/bin/cat"],"timeout":"30s"}`, policy: `{"exec":{"max_timeout":"5s"}}`}, CodeNotGranted, cfgPath + ".timeout"},
		{"exec default timeout over the grant", capability{kind: "exec", config: `{"argv":["/bin/cat"]}`, policy: `{"exec":{"max_timeout":"5s"}}`}, CodeNotGranted, cfgPath + ".timeout"},
		{"exec policy unknown field", capability{kind: "exec", config: `{"argv":["/bin/cat"]}`, policy: `{"exec":{"env":{}}}`}, plan.CodeInvalidGrant, "grants[0].policy.exec.env"},
		{"builtin policy section", capability{kind: "builtin", id: "echo", policy: `{"kv":{}}`}, plan.CodeInvalidGrant, "grants[0].policy.kv"},
		{"builtin policy unknown field", capability{kind: "builtin", id: "echo", policy: `{"cities":["Paris"]}`}, plan.CodeInvalidGrant, "grants[0].policy.cities"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.cap.name = "cap.x"
			hs, closer, err := Build(manifestOf(t, tc.cap), Options{})
			if err == nil {
				closer.Close()
				t.Fatalf("built %v, want %s at %s", hs, tc.code, tc.path)
			}
			if hs != nil || closer != nil {
				t.Errorf("a failed Build returned handlers or a closer")
			}
			if !problemAt(err, tc.code, tc.path) {
				t.Fatalf("got %v, want %s at %s", err, tc.code, tc.path)
			}
			// The Checker (what plan seal runs) finds the same problems
			// without building, except a resource that cannot be prepared.
			checked := Checker{}.CheckHandlers(manifestOf(t, tc.cap))
			if tc.code == CodeHandlerSetup {
				if checked != nil {
					t.Fatalf("Checker: %v", checked)
				}
			} else if checked == nil || checked.Error() != err.Error() {
				t.Fatalf("Checker: %v, Build: %v", checked, err)
			}
		})
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused kv config created its database file: %v", err)
	}
}

// TestBuildErrorsKeepSecrets: a refused config's values never appear in
// the error text (headers and environment may hold credentials).
func TestBuildErrorsKeepSecrets(t *testing.T) {
	const secret = "Bearer SECRET-TOKEN-41"
	_, err := build(t, Options{}, capability{name: "a.b", kind: "http", playback: "captured",
		config: `{"method":"GET","url":"http://127.0.0.1:8080/","headers":{"Authorization":"` + secret + `","Host":"x"}}`,
		policy: `{"http":{"allowed_hosts":["127.0.0.1:9"]},"arguments":{"$comment":"` + secret + `","enum":7}}`})
	if err == nil {
		t.Fatal("built")
	}
	if strings.Contains(err.Error(), "SECRET") || strings.Contains(err.Error(), "127.0.0.1") {
		t.Fatalf("error leaks config: %v", err)
	}
}

func TestBuildReportsEveryProblem(t *testing.T) {
	_, err := build(t, Options{},
		capability{name: "a.one", kind: "exec", config: `{"argv":["rel"],"x":1}`},
		capability{name: "a.two", kind: "kv", config: `{"op":"put"}`})
	for _, want := range []struct{ code, path string }{
		{CodeInvalidConfig, "capabilities[0].handler.config.argv"},
		{CodeInvalidConfig, "capabilities[0].handler.config.x"},
		{CodeInvalidConfig, "capabilities[1].handler.config.path"},
		{CodeHandlerMismatch, "capabilities[1].handler.config.op"},
	} {
		if !problemAt(err, want.code, want.path) {
			t.Errorf("missing %s at %s in:\n%v", want.code, want.path, err)
		}
	}
}

func TestBuildSharedIdentity(t *testing.T) {
	const cfg = `{"method":"GET","url":"http://127.0.0.1:8080/"}`
	same := `{"http":{"allowed_hosts":["127.0.0.1:8080"]}}`
	// Same identity, same http section (key order and the rest of the
	// grant differ): one handler.
	_, err := build(t, Options{},
		capability{name: "a.one", kind: "http", playback: "captured", config: cfg, policy: same},
		capability{name: "a.two", kind: "http", playback: "captured", config: cfg, policy: ` { "max_calls": 2, "http" : { "allowed_hosts" : [ "127.0.0.1:8080" ] } }`})
	if err != nil {
		t.Fatalf("same grants: %v", err)
	}
	// Same identity, different sections: refused, the handler cannot tell them apart.
	_, err = build(t, Options{},
		capability{name: "a.one", kind: "http", playback: "captured", config: cfg, policy: same},
		capability{name: "a.two", kind: "http", playback: "captured", config: cfg, policy: `{"http":{"allowed_hosts":["127.0.0.1:8080","127.0.0.1:9090"]}}`})
	if !problemAt(err, CodeHandlerConflict, "capabilities[1].handler") {
		t.Fatalf("different grants: %v", err)
	}
	// Different handler ids make them two handlers: fine.
	_, err = build(t, Options{},
		capability{name: "a.one", kind: "http", id: "one", playback: "captured", config: cfg, policy: same},
		capability{name: "a.two", kind: "http", id: "two", playback: "captured", config: cfg, policy: `{"http":{"allowed_hosts":["127.0.0.1:8080","127.0.0.1:9090"]}}`})
	if err != nil {
		t.Fatalf("two ids: %v", err)
	}
	// A kv key_prefix is the handler's too: one identity, two prefixes is a conflict.
	db0 := filepath.Join(t.TempDir(), "kv.db")
	get := `{"path":"` + db0 + `","op":"get"}`
	_, err = build(t, Options{},
		capability{name: "a.one", kind: "kv", config: get, policy: `{"kv":{"key_prefix":"a/"}}`},
		capability{name: "a.two", kind: "kv", config: get, policy: `{"kv":{"key_prefix":"b/"}}`})
	if !problemAt(err, CodeHandlerConflict, "capabilities[1].handler") {
		t.Fatalf("different kv sections: %v", err)
	}
	// A shared kv put identity is checked for every capability that uses it.
	db := filepath.Join(t.TempDir(), "kv.db")
	kv := `{"path":"` + db + `","op":"put"}`
	_, err = build(t, Options{},
		capability{name: "a.one", kind: "kv", effect: "write", config: kv},
		capability{name: "a.two", kind: "kv", effect: "read", config: kv})
	if !problemAt(err, CodeHandlerMismatch, "capabilities[1].handler.config.op") {
		t.Fatalf("shared put identity on a read capability: %v", err)
	}
}

// TestBuildConfigBoundToIdentity: a hand-made manifest whose config is not
// the one its identity's digest names is refused.
func TestBuildConfigBoundToIdentity(t *testing.T) {
	m := manifestOf(t, capability{name: "a.b", kind: "exec", config: `{"argv":["/bin/cat"]}`})
	m.Capabilities[0].HandlerConfig = json.RawMessage(`{"argv":["/bin/sh","-c","id"]}`)
	if _, _, err := Build(m, Options{}); !problemAt(err, CodeInvalidConfig, "capabilities[0].handler.config") {
		t.Fatalf("got %v", err)
	}
	canon, _ := canonjson.Canonical([]byte(`{"argv":["/bin/cat"]}`))
	if m.Capabilities[0].Spec.Handler.ConfigSHA256 != canonjson.PlainDigest(canon) {
		t.Fatal("test premise: the plan package digests the canonical config")
	}
}

func TestBuildEmptyManifestAndNil(t *testing.T) {
	if _, _, err := Build(nil, Options{}); err == nil {
		t.Fatal("nil manifest built")
	}
	hs, closer, err := Build(&plan.Manifest{MaxCalls: 1}, Options{})
	if err != nil || hs == nil || closer == nil {
		t.Fatalf("empty manifest: %v", err)
	}
	if err := closer.Close(); err != nil {
		t.Fatal(err)
	}
	if err := closer.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
}

// The Checker creates nothing: a valid kv config leaves no database file.
func TestCheckerCreatesNothing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "kv.db")
	m := manifestOf(t, capability{name: "notes.get", kind: "kv", config: `{"path":"` + db + `","op":"get"}`})
	if err := (Checker{}).CheckHandlers(m); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the Checker created the database file: %v", err)
	}
	if err := (Checker{}).CheckHandlers(nil); err == nil {
		t.Fatal("nil manifest accepted")
	}
}
