package main

import (
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
