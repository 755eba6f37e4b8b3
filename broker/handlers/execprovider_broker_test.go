package handlers

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/plan"
)

// TestExecProviderThroughBroker: the example tool as the provider of a
// strict capability and of one whose acceptance is off, end to end through
// a sealed Plan, Build and the Broker: a commit, a factual no-change, a
// revocation at the provider and the rejection that follows it.
func TestExecProviderThroughBroker(t *testing.T) {
	needPython(t)
	dir := t.TempDir()
	db, epochs, key := filepath.Join(dir, "notes.db"), filepath.Join(dir, "epochs.json"), filepath.Join(dir, "notes.key")
	tool := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(hostPython, append([]string{"-I", notesTool(t)}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("notes_provider %v: %v\n%s", args, err, out)
		}
	}
	tool("init", "--db", db, "--epoch-file", epochs, "--provider-id", "notes", "--epoch", "e1",
		"--capability", "notes.publish=strict", "--capability", "notes.draft=off")
	argv, _ := json.Marshal([]string{hostPython, "-I", notesTool(t), "serve", "--db", db, "--epoch-file", epochs})
	config := `{"argv":` + string(argv) + `,"timeout":"60s","provider":{"id":"notes","guarantees":` + allGuarantees +
		`,"retention_seconds":3600,"readback":true,"credential_file":"` + key + `"}}`
	capability := func(name, acceptance string) string {
		return `{"name":"` + name + `","version":"1","effect":"write","playback":"live","acceptance":"` + acceptance + `",
			"handler":{"kind":"exec","id":"notes","version":"1","config":` + config + `},
			"input_schema":{"type":"object"},"output_schema":{}}`
	}
	m, err := plan.ParseManifest([]byte(`{"schema_version":"apysup.manifest.v1","max_calls":8,"capabilities":[` +
		capability("notes.publish", "strict") + `,` + capability("notes.draft", "off") + `],
		"grants":[{"capability":"notes.publish","policy":{}},{"capability":"notes.draft","policy":{}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Seal(Checker{}) // the key file does not exist yet: sealing never reads it
	if err != nil {
		t.Fatalf("seal: %v", err)
	}
	issue := []string{"issue", "--db", db, "--epoch-file", epochs, "--tenant", "t", "--subject", "host", "--key-file", key}
	for _, g := range p.Grants() {
		issue = append(issue, "--policy", g.PolicySHA256)
	}
	tool(issue...)
	b, hs := brokerOf(t, m, p, Options{})

	for _, tc := range []struct {
		n                  int
		capability, args   string
		status, code, want string
	}{
		{1, "notes.publish", `{"title":"hello","body":"first"}`, "ok", "", `{"changed":true,"revision":1,"title":"hello"}`},
		{2, "notes.publish", `{"title":"hello","body":"first"}`, "ok", "", `{"changed":false,"revision":1,"title":"hello"}`},
		{3, "notes.draft", `{"title":"draft","body":"d"}`, "ok", "", `{"changed":true,"revision":1,"title":"draft"}`},
		{4, "notes.publish", `{"title":"restricted/x","body":"d"}`, "denied", broker.CodeProviderRejected, ""},
	} {
		r := brokerCall(t, b, tc.n, tc.capability, tc.args)
		if r.Status != tc.status || r.ErrorCode != tc.code || (tc.want != "" && string(r.Result) != tc.want) {
			t.Fatalf("call %d: %+v %s", tc.n, r, r.Result)
		}
	}
	if _, err := broker.RevokeGrant(context.Background(), p, hs, "notes.publish"); err != nil {
		t.Fatalf("revoke: %v", err)
	}
	if r := brokerCall(t, b, 5, "notes.publish", `{"title":"hello","body":"second"}`); r.Status != "denied" || r.ErrorCode != broker.CodeProviderRejected {
		t.Fatalf("after the revocation: %+v", r)
	}
}

// TestExecProviderProfileMismatchRefused: a strict capability whose tool
// declares less than its config (here another provider id) seals (the
// config alone speaks), but is refused when built, before any call.
func TestExecProviderProfileMismatchRefused(t *testing.T) {
	s := newNotesStore(t)
	m, err := plan.ParseManifest([]byte(`{"schema_version":"apysup.manifest.v1","max_calls":8,"capabilities":[
		{"name":"notes.publish","version":"1","effect":"write","playback":"live","acceptance":"strict",
		 "handler":{"kind":"exec","id":"notes","version":"1","config":` + s.config(t, "not-notes", "") + `},
		 "input_schema":{"type":"object"},"output_schema":{}}],
		"grants":[{"capability":"notes.publish","policy":{}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Seal(Checker{}); err != nil {
		t.Fatalf("seal: %v", err)
	}
	if _, _, err := Build(m, Options{}); !problemAt(err, broker.CodeAcceptanceUnsupported, "capabilities[0].handler") {
		t.Fatalf("build: %v", err)
	}
	if n := s.count(t, `SELECT count(*) FROM decisions`); n != 0 {
		t.Fatalf("%d decisions", n)
	}
}
