package plan

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
	"github.com/apysup/apysup/python"
)

const guestPython = "/usr/bin/python3.11"

func TestPresentSurfaces(t *testing.T) {
	p := sealBytes(t, readManifest(t))
	if _, err := p.Present("sideways", ""); CodeOf(err) != CodeInvalidProgramSurface {
		t.Fatalf("unknown surface: %v", err)
	}
	if _, err := ParseSurface(""); CodeOf(err) != CodeInvalidProgramSurface {
		t.Fatalf("empty surface: %v", err)
	}
	if _, err := p.Present(SurfaceDirect, "toolu_1"); CodeOf(err) != CodeInvalidParent {
		t.Fatalf("direct with parent: %v", err)
	}
	for _, bad := range []string{"", "a:b", "x:program:1", strings.Repeat("a", 129), "-lead"} {
		if _, err := p.Present(SurfaceProgrammatic, bad); CodeOf(err) != CodeInvalidParent {
			t.Errorf("parent %q accepted: %v", bad, err)
		}
	}
	direct, err := p.Present(SurfaceDirect, "")
	if err != nil || len(direct.Tools) != 2 || direct.Tools[0].Name != "notes.put" {
		t.Fatalf("direct: %+v %v", direct, err)
	}
	prog, err := p.Present(SurfaceProgrammatic, "toolu_1")
	if err != nil || len(prog.Tools) != 0 || len(prog.Prelude) == 0 {
		t.Fatalf("programmatic: %+v %v", prog, err)
	}
	both, err := p.Present(SurfaceBoth, "toolu_1")
	if err != nil || len(both.Tools) != 2 {
		t.Fatalf("both: %+v %v", both, err)
	}
	var tool map[string]any
	raw, _ := json.Marshal(direct.Tools[1])
	if err := json.Unmarshal(raw, &tool); err != nil || tool["name"] != "weather.get" || tool["input_schema"] == nil || tool["description"] == nil {
		t.Fatalf("tool shape: %s", raw)
	}
}

// fakeRuntime stands in for agent_runtime: it records what the prelude asks
// for, applying the call id rules of ARCHITECTURE.md.
const fakeRuntime = `
import json, sys
_parent = None
_n = 0
def _bind(parent):
    global _parent
    _parent = parent
def _capability_call(name, args):
    global _n
    _n += 1
    call_id = ("capability-%d" % _n) if _parent is None else ("%s:program:%d" % (_parent, _n))
    sys.stdout.write(json.dumps({"call_id": call_id, "capability": name, "arguments": args}, sort_keys=True) + "\n")
    return {"ok": True}
`

const preludeScript = `
import runpy, sys
exec(compile(open(sys.argv[1]).read(), "prelude.py", "exec"), {"__name__": "_apysup_prelude"})
import weather, notes
assert weather.get.__name__ == "get" and weather.get.__module__ == "weather"
assert weather.get.__doc__ == "Current weather for a city."
weather.get(city="Paris")
weather.get_weather(city="Oslo")
notes.put(text="hi")
try:
    weather.get("Paris")
except TypeError:
    print("positional-refused")
`

func TestPreludeRunsUnderPython311(t *testing.T) {
	_, err := os.Stat(guestPython)
	testenv.Need(t, err == nil, guestPython+" (apt-get install python3.11)")
	p := sealBytes(t, readManifest(t))
	cases := []struct {
		surface Surface
		parent  string
		ids     []string
	}{
		{SurfaceDirect, "", []string{"capability-1", "capability-2", "capability-3"}},
		{SurfaceProgrammatic, "toolu_1", []string{"toolu_1:program:1", "toolu_1:program:2", "toolu_1:program:3"}},
		{SurfaceBoth, "call.7", []string{"call.7:program:1", "call.7:program:2", "call.7:program:3"}},
	}
	for _, tc := range cases {
		t.Run(string(tc.surface), func(t *testing.T) {
			pr, err := p.Present(tc.surface, tc.parent)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			write := func(name, body string) string {
				path := filepath.Join(dir, name)
				if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
					t.Fatal(err)
				}
				return path
			}
			write("agent_runtime.py", fakeRuntime)
			prelude := write("prelude.py", string(pr.Prelude))
			script := write("main.py", preludeScript)
			// py_compile first: the prelude must compile on its own.
			if out, err := exec.Command(guestPython, "-I", "-S", "-m", "py_compile", prelude).CombinedOutput(); err != nil {
				t.Fatalf("prelude does not compile: %v\n%s", err, out)
			}
			cmd := exec.Command(guestPython, "-S", script, prelude)
			cmd.Dir = dir
			cmd.Env = []string{"PYTHONPATH=" + dir, "PYTHONDONTWRITEBYTECODE=1"}
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("prelude run: %v\n%s", err, out)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			want := []string{
				`{"arguments": {"city": "Paris"}, "call_id": "` + tc.ids[0] + `", "capability": "weather.get"}`,
				`{"arguments": {"city": "Oslo"}, "call_id": "` + tc.ids[1] + `", "capability": "weather.get"}`,
				`{"arguments": {"text": "hi"}, "call_id": "` + tc.ids[2] + `", "capability": "notes.put"}`,
				"positional-refused",
			}
			if strings.Join(lines, "\n") != strings.Join(want, "\n") {
				t.Fatalf("got\n%s\nwant\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestPreludeOfEmptyPlan(t *testing.T) {
	r, _ := NewRegistry(1)
	p, err := r.Seal()
	if err != nil {
		t.Fatal(err)
	}
	pr, err := p.Present(SurfaceDirect, "")
	if err != nil || strings.Contains(string(pr.Prelude), "del _m") {
		t.Fatalf("%v\n%s", err, pr.Prelude)
	}
	// Without Python projections no helper is written: the runner compiles
	// the prelude on every run's path.
	for _, helper := range []string{"def _module", "def _callable", "def _function", "import types"} {
		if strings.Contains(string(pr.Prelude), helper) {
			t.Fatalf("%q in the empty Plan's prelude:\n%s", helper, pr.Prelude)
		}
	}
	if !strings.Contains(string(pr.Prelude), "_main_globals = {}") {
		t.Fatalf("no _main_globals:\n%s", pr.Prelude)
	}
}

// The prelude against the real guest runtime (python.GuestFiles) and a fake
// _agent_runtime_host: the exact frames each surface sends.
func TestPreludeWithRealRuntime(t *testing.T) {
	_, err := os.Stat(guestPython)
	testenv.Need(t, err == nil, guestPython+" (apt-get install python3.11)")
	p := sealBytes(t, readManifest(t))
	for _, tc := range []struct {
		surface Surface
		parent  string
		ids     [3]string
	}{
		{SurfaceDirect, "", [3]string{"capability-1", "capability-2", "capability-3"}},
		{SurfaceProgrammatic, "toolu_1", [3]string{"toolu_1:program:1", "toolu_1:program:2", "toolu_1:program:3"}},
		{SurfaceBoth, "call.7", [3]string{"call.7:program:1", "call.7:program:2", "call.7:program:3"}},
	} {
		t.Run(string(tc.surface), func(t *testing.T) {
			pr, err := p.Present(tc.surface, tc.parent)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			for _, name := range []string{"agent_runtime.py", "_agent_runtime_wire.py"} {
				data, err := fs.ReadFile(python.GuestFiles, name)
				if err != nil {
					t.Fatal(err)
				}
				os.WriteFile(filepath.Join(dir, name), data, 0o644)
			}
			os.WriteFile(filepath.Join(dir, "_agent_runtime_host.py"), []byte(
				"import sys\ndef call(request):\n    sys.stdout.write(request.decode() + '\\n')\n    return b'{\"ok\":true}'\n"), 0o644)
			os.WriteFile(filepath.Join(dir, "prelude.py"), pr.Prelude, 0o644)
			os.WriteFile(filepath.Join(dir, "main.py"), []byte(
				"exec(compile(open('prelude.py').read(), 'prelude.py', 'exec'), {'__name__': 'p'})\n"+
					"import weather, notes\nassert weather.get(city='Paris') == {'ok': True}\nweather.get_weather(city='Oslo')\nnotes.put(text='é')\n"), 0o644)
			cmd := exec.Command(guestPython, "-S", "main.py")
			cmd.Env = []string{"PYTHONDONTWRITEBYTECODE=1"}
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := `{"call_id":"` + tc.ids[0] + `","capability":"weather.get","arguments":{"city":"Paris"}}` + "\n" +
				`{"call_id":"` + tc.ids[1] + `","capability":"weather.get","arguments":{"city":"Oslo"}}` + "\n" +
				`{"call_id":"` + tc.ids[2] + `","capability":"notes.put","arguments":{"text":"é"}}` + "\n"
			if string(out) != want {
				t.Fatalf("frames:\n%s\nwant:\n%s", out, want)
			}
		})
	}
}
