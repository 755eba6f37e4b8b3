package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestReceiptsVerify(t *testing.T) {
	needNative(t)
	out, errOut, code := run(t, "run", "--json", "--plan", "../../examples/plan.json", "../../examples/hello.py")
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.json", out)
	for _, args := range [][]string{{"--plan", "../../examples/plan.json", good}, {good, "--plan", "../../examples/plan.json"}} { // flags before or after RESULT
		if got, errOut, code := run(t, append([]string{"receipts", "verify"}, args...)...); code != 0 || !strings.HasPrefix(got, "ok: 1 receipts") {
			t.Fatalf("good result %v: exit %d %q %q", args, code, got, errOut)
		}
	}
	// The result's plan digest with its first hex digit changed.
	planDigest := regexp.MustCompile(`"plan_sha256": "sha256:[0-9a-f]`).FindString(out)
	if planDigest == "" {
		t.Fatalf("no plan digest in %s", out)
	}
	otherDigest := planDigest[:len(planDigest)-1] + map[bool]string{true: "1", false: "0"}[strings.HasSuffix(planDigest, "0")]
	tampered := map[string][2]string{
		"outcome":        {`"outcome": "ok"`, `"outcome": "error"`},
		"capability":     {`"capability": "weather.get"`, `"capability": "weather.set"`},
		"added field":    {`"outcome": "ok"`, `"outcome": "ok", "note": "x"`},
		"run id":         {`"run_id": "run-`, `"run_id": "run-0`},
		"workspace":      {`"entry_count": 0`, `"entry_count": 1`},
		"plan of result": {planDigest, otherDigest},
	}
	for name, edit := range tampered {
		t.Run(name, func(t *testing.T) {
			body := strings.Replace(out, edit[0], edit[1], 1)
			if body == out {
				t.Fatalf("edit %q did not apply", edit[0])
			}
			got, _, code := run(t, "receipts", "verify", "--plan", "../../examples/plan.json", write(strings.ReplaceAll(name, " ", "_")+".json", body))
			if code != 1 || !strings.Contains(got, "FAIL") {
				t.Fatalf("tampering not caught: exit %d %q", code, got)
			}
		})
	}
	// The same result against another Plan fails the binding.
	other := strings.Replace(readFile(t, "../../examples/plan.json"), `"max_calls": 16`, `"max_calls": 15`, 1)
	if got, _, code := run(t, "receipts", "verify", "--plan", writeManifest(t, other), good); code != 1 || !strings.Contains(got, "receipt_plan_mismatch") {
		t.Fatalf("other plan: exit %d %q", code, got)
	}
}
