package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// A root that may not mount or make namespaces (a container's root
// without CAP_SYS_ADMIN, as Docker starts one) still runs wazero guests:
// the workspace, /tmp and the out directory stay plain directories under
// their budgets, and the guest's child process starts without
// namespaces, as without root. setpriv drops CAP_SYS_ADMIN from the
// bounding set, so the re-executed apysup has it nowhere.
func TestWazeroWithoutCapSysAdmin(t *testing.T) {
	testenv.NeedRoot(t)
	needWASI(t)
	setpriv, err := exec.LookPath("setpriv")
	testenv.Need(t, err == nil, "setpriv (util-linux)")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := `import os, tempfile
open("/tmp/t", "w").write("x")
print(os.listdir("/tmp"), tempfile.gettempdir())
`
	cmd := exec.Command(setpriv, "--bounding-set", "-sys_admin", "--inh-caps", "-sys_admin", "--",
		self, "run", "--backend", "wazero", "--json", "-c", script)
	cmd.Env = append(os.Environ(), cliEnv+"=1")
	out, err := cmd.Output()
	var res struct {
		Status, Stdout, Stderr string
		ErrorCode              string `json:"error_code"`
	}
	if jerr := json.Unmarshal(out, &res); jerr != nil {
		t.Fatalf("%v: %v\n%s", err, jerr, out)
	}
	if res.Status != string(sandbox.StatusOK) || res.Stdout != "['t'] /tmp\n" {
		t.Fatalf("status %s (%s) stdout %q stderr %q", res.Status, res.ErrorCode, res.Stdout, res.Stderr)
	}
}
