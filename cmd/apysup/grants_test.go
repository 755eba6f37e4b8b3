package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/broker"
)

// TestGrantsRevokeRefusals: grants revoke reaches the handler the manifest
// builds and refuses, typed, what cannot be revoked; it never prints the
// policy. (A provider's revocation: broker's TestRevokeGrant and the kv
// provider's tests.)
func TestGrantsRevokeRefusals(t *testing.T) {
	manifest := secretManifest(t)
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no capability", []string{"grants", "revoke", "--plan", manifest}, ExitUsage, "--capability NAME"},
		{"no plan", []string{"grants", "revoke", "--capability", "weather.get"}, ExitUsage, "--plan FILE"},
		{"unknown capability", []string{"grants", "revoke", "--plan", manifest, "--capability", "nope.nope"}, 1, broker.CodeUnknownCapability},
		{"not a provider", []string{"grants", "revoke", "--plan", manifest, "--capability", "weather.get"}, 1, broker.CodeGrantNotRevocable},
		{"manifest refused", []string{"grants", "revoke", "--plan", writeManifest(t, `{}`), "--capability", "a.b"}, 2, "invalid_manifest"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, code := run(t, tc.args...)
			if code != tc.code || !strings.Contains(errOut, tc.want) || out != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, out, errOut)
			}
			if strings.Contains(errOut, "GRANT-SECRET-42") {
				t.Fatal("the policy leaked")
			}
		})
	}
}

// TestGrantsRevokeStrictKV: a strict kv put commits and its receipt
// references the provider's decision; `grants revoke` revokes the grant at
// the provider (the policy order receipt it prints is a digest, the policy
// never shown); the next run's put is refused by the provider, terminally,
// and its receipt references the rejection.
func TestGrantsRevokeStrictKV(t *testing.T) {
	needNative(t)
	dir, err := os.MkdirTemp("", "agr")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	credential := filepath.Join(dir, "kv.credential")
	if err := os.WriteFile(credential, []byte(strings.Repeat("grants-revoke-credential-", 2)), 0o600); err != nil {
		t.Fatal(err)
	}
	manifest := writeManifest(t, `{"schema_version": "apysup.manifest.v1", "max_calls": 4,
 "capabilities": [{"name": "ledger.put", "version": "1", "effect": "write", "playback": "live", "acceptance": "strict",
   "handler": {"kind": "kv", "id": "ledger", "version": "1", "config": {"path": "`+filepath.Join(dir, "ledger.db")+`", "op": "put",
     "acceptance": "strict", "credential_file": "`+credential+`", "epoch_file": "`+filepath.Join(dir, "epochs.db")+`",
     "tenant": "team", "subject": "agent"}},
   "input_schema": {"type": "object"}, "python": {"module": "ledger", "function": "put"}}],
 "grants": [{"capability": "ledger.put", "policy": {"kv": {"key_prefix": "k"}}}]}`)
	s := script(t, "import ledger, agent_runtime\ntry:\n    print(ledger.put(key='k', value=1))\nexcept agent_runtime.CapabilityError as e:\n    print('refused:', e.error_code)\n")

	res, code, _ := runJSON(t, "--plan", manifest, s)
	if code != 0 || len(res.Receipts) != 1 || res.Receipts[0].Outcome != "ok" || res.Receipts[0].ProviderReceiptSHA256 == "" {
		t.Fatalf("before the revocation: exit %d %+v", code, res)
	}
	out, errOut, code := run(t, "grants", "revoke", "--json", "--plan", manifest, "--capability", "ledger.put")
	var rev broker.Revocation
	if code != 0 || json.Unmarshal([]byte(out), &rev) != nil || !strings.HasPrefix(rev.PolicyOrderReceiptSHA256, "sha256:") ||
		strings.Contains(out+errOut, "key_prefix") {
		t.Fatalf("grants revoke: exit %d\n%s\n%s", code, out, errOut)
	}
	res, code, _ = runJSON(t, "--plan", manifest, s)
	r := res.Receipts
	if code != 0 || len(r) != 1 || r[0].Outcome != "denied" || r[0].ErrorCode != broker.CodeProviderRejected || r[0].ProviderReceiptSHA256 == "" ||
		!strings.Contains(res.Stdout, "refused: "+broker.CodeProviderRejected) {
		t.Fatalf("after the revocation: exit %d %+v", code, res)
	}
}
