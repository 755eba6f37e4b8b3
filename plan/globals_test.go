package plan

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

func TestPythonGlobalsRefusals(t *testing.T) {
	data := readManifest(t)
	setGlobals := func(i int, globals ...any) func(m map[string]any) {
		return func(m map[string]any) { capAt(m, i)["python"].(map[string]any)["globals"] = globals }
	}
	many := make([]any, MaxGlobals+1)
	for i := range many {
		many[i] = "g" + string(rune('a'+i))
	}
	cases := map[string]struct {
		mutate func(m map[string]any)
		code   string
		path   string
	}{
		"not an identifier":     {setGlobals(0, "get-weather"), CodeInvalidPython, "capabilities[0].python.globals[0]"},
		"private name":          {setGlobals(0, "ok", "_hidden"), CodeInvalidPython, "capabilities[0].python.globals[1]"},
		"keyword":               {setGlobals(0, "lambda"), CodeInvalidPython, "capabilities[0].python.globals[0]"},
		"builtin function":      {setGlobals(0, "print"), CodePythonCollision, "capabilities[0].python.globals[0]"},
		"builtin exception":     {setGlobals(0, "ValueError"), CodePythonCollision, "capabilities[0].python.globals[0]"},
		"site builtin":          {setGlobals(0, "exit"), CodePythonCollision, "capabilities[0].python.globals[0]"},
		"listed twice":          {setGlobals(0, "wx", "wx"), CodePythonCollision, "capabilities[0].python.globals[1]"},
		"too many":              {setGlobals(0, many...), CodeInvalidPython, "capabilities[0].python.globals"},
		"two capabilities":      {func(m map[string]any) { setGlobals(0, "wx")(m); setGlobals(1, "note", "wx")(m) }, CodePythonCollision, "capabilities[1].python.globals[1]"},
		"empty and no module":   {func(m map[string]any) { capAt(m, 0)["python"] = map[string]any{"globals": []any{}} }, CodeInvalidPython, "capabilities[0].python.globals"},
		"no module, no globals": {func(m map[string]any) { capAt(m, 0)["python"] = map[string]any{"aliases": []any{"x"}} }, CodeInvalidManifest, "capabilities[0].python.module"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := ParseManifest(mutate(t, data, tc.mutate))
			if err == nil {
				_, err = m.Seal(anyHandlers{})
			}
			var problems Problems
			if !asProblems(err, &problems) {
				t.Fatalf("want problems, got %v", err)
			}
			for _, p := range problems {
				if p.Code == tc.code && p.Path == tc.path {
					return
				}
			}
			t.Fatalf("want %s at %s, got:\n%v", tc.code, tc.path, err)
		})
	}
}

func TestPythonGlobalsAlone(t *testing.T) {
	data := mutate(t, readManifest(t), func(m map[string]any) {
		capAt(m, 1)["python"] = map[string]any{"globals": []any{"put_note"}}
		capAt(m, 0)["python"].(map[string]any)["globals"] = []any{"current_weather"}
	})
	p := sealBytes(t, data)
	c, _ := p.Lookup("notes.put")
	if py := c.Spec().Python; py.Module != "" || strings.Join(py.Globals, ",") != "put_note" {
		t.Fatalf("projection %+v", py)
	}
	if p.Identity() != sealBytes(t, readManifest(t)).Identity() {
		t.Fatal("globals changed the Plan identity")
	}
	pr, err := p.Present(SurfaceProgrammatic, "toolu_1")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(pr.Prelude), `_module("notes")`) || strings.Contains(string(pr.Prelude), `_module("")`) {
		t.Fatalf("a projection of globals alone made a module:\n%s", pr.Prelude)
	}
}

// The globals the prelude leaves for the runner call their capabilities
// and present themselves as the script's own functions.
func TestPreludeGlobalsUnderPython311(t *testing.T) {
	_, err := os.Stat(guestPython)
	testenv.Need(t, err == nil, guestPython+" (apt-get install python3.11)")
	p := sealBytes(t, mutate(t, readManifest(t), func(m map[string]any) {
		capAt(m, 0)["python"].(map[string]any)["globals"] = []any{"current_weather", "wx"}
		capAt(m, 1)["python"] = map[string]any{"globals": []any{"put_note"}}
	}))
	pr, err := p.Present(SurfaceProgrammatic, "toolu_1")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "agent_runtime.py"), []byte(fakeRuntime), 0o600)
	os.WriteFile(filepath.Join(dir, "prelude.py"), pr.Prelude, 0o600)
	os.WriteFile(filepath.Join(dir, "main.py"), []byte(`
import sys
ns = {"__name__": "__apysup_prelude__"}
exec(compile(open("prelude.py").read(), "prelude.py", "exec"), ns)
g = ns["_main_globals"]
print(sorted(g))
print(g["wx"].__name__, g["wx"].__module__, g["wx"].__doc__)
g["current_weather"](city="Paris")
g["put_note"](text="hi")
print("notes" in sys.modules)
`), 0o600)
	cmd := exec.Command(guestPython, "-S", "main.py")
	cmd.Dir = dir
	cmd.Env = []string{"PYTHONPATH=" + dir, "PYTHONDONTWRITEBYTECODE=1"}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := "['current_weather', 'put_note', 'wx']\n" +
		"wx __main__ Current weather for a city.\n" +
		`{"arguments": {"city": "Paris"}, "call_id": "toolu_1:program:1", "capability": "weather.get"}` + "\n" +
		`{"arguments": {"text": "hi"}, "call_id": "toolu_1:program:2", "capability": "notes.put"}` + "\n" +
		"False\n"
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
}

// pythonBuiltins is exactly the interpreter's list (python_builtins.go is
// generated from it).
func TestPythonBuiltinsCurrent(t *testing.T) {
	_, err := os.Stat(guestPython)
	testenv.Need(t, err == nil, guestPython+" (apt-get install python3.11)")
	out, err := exec.Command(guestPython, "-I", "-c", `import builtins; print(" ".join(n for n in dir(builtins) if not n.startswith("_")))`).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Fields(string(out))
	got := make([]string, 0, len(pythonBuiltins))
	for n := range pythonBuiltins {
		got = append(got, n)
	}
	sort.Strings(want)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("python_builtins.go is stale:\ngot  %v\nwant %v", got, want)
	}
}
