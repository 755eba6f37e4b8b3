package plan

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"testing"

	"github.com/apysup/apysup/internal/testenv"
)

const schemaModule = "github.com/santhosh-tekuri/jsonschema/v6"

// The tests run against the jsonschema make builds with: go.mod's version,
// with apysup's patch for that version (third_party/jsonschema), whose
// package init compiles nothing: the drafts' metaschemas are compiled at a
// process's first Compile, not at every start of every apysup process
// (about 9 ms and 1.7 MB as released). Outside make (no workspace) the
// patch is missing, which CI does not accept.
func TestSchemaLibraryIsPatched(t *testing.T) {
	testenv.HasPatch(t, schemaModule, "jsonschema")

	// This test binary again, running no test: the runtime's trace of each
	// package's init says what jsonschema's allocated.
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "GODEBUG=inittrace=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	line := regexp.MustCompile(`(?m)^init ` + regexp.QuoteMeta(schemaModule) + ` @.*, (\d+) bytes, \d+ allocs$`).FindSubmatch(out)
	if line == nil {
		t.Fatalf("no init trace of %s in:\n%s", schemaModule, out)
	}
	bytes, err := strconv.Atoi(string(line[1]))
	if err != nil {
		t.Fatal(err)
	}
	testenv.Need(t, bytes < 100<<10, "jsonschema with apysup's patch (run the tests through make, whose workspace .build/go.work replaces the module): its init allocated "+strconv.Itoa(bytes)+" bytes")

	// The metaschemas are in place when a schema compiles: a schema they
	// refuse is refused.
	if _, _, err := compileSchemaDoc(json.RawMessage(`{"type": 5}`), false); err == nil {
		t.Fatal("a schema the metaschema refuses compiled")
	}
	if _, _, err := compileSchemaDoc(json.RawMessage(`{"type": "object"}`), false); err != nil {
		t.Fatal(err)
	}
}
