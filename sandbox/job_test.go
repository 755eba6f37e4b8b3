package sandbox

import (
	"encoding/json"
	"slices"
	"testing"
)

func TestScriptNameAndArgv(t *testing.T) {
	j := Job{ScriptPath: "/host/dir/main.py", Args: []string{"a b", "", "--", "é"}}
	name, err := j.ScriptName()
	if err != nil || name != "main.py" {
		t.Fatalf("%q %v", name, err)
	}
	b, err := j.ArgvJSON()
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	if err := json.Unmarshal(b, &argv); err != nil {
		t.Fatal(err)
	}
	if want := []string{GuestJobDir + "/main.py", "a b", "", "--", "é"}; !slices.Equal(argv, want) {
		t.Errorf("argv %q, want %q", argv, want)
	}
	for _, bad := range []string{"", "/x/prelude.py", "/x/.argv.json", "/x/.hidden.py"} {
		j := Job{ScriptPath: bad}
		if _, err := j.ScriptName(); err == nil {
			t.Errorf("%q accepted", bad)
		}
		if _, err := j.ArgvJSON(); err == nil {
			t.Errorf("%q accepted by ArgvJSON", bad)
		}
	}
}

// The command line names the runner's files and no script, so that a
// sandbox can start before its job is known.
func TestRunnerArgv(t *testing.T) {
	argv := RunnerArgv()
	if argv[0] != GuestPython || !slices.Contains(argv, GuestRunner) || !slices.Contains(argv, GuestJobDir+"/"+ArgvFile) ||
		slices.Contains(argv, "--") {
		t.Errorf("argv %q", argv)
	}
}
