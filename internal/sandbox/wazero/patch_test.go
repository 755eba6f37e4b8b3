package wazero

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"

	"github.com/apysup/apysup/internal/testenv"
)

// The tests run against the wazero make builds with: go.mod's version,
// with apysup's patch for that version. Outside make (no workspace) the
// patch is missing, which CI does not accept.
func TestRuntimeIsPatched(t *testing.T) {
	ctx := context.Background()
	testenv.HasPatch(t, wazeroModule, "wazero")

	// The detector is not always yes: wazero's interpreter has no such
	// method, patched or not.
	interp := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer interp.Close(ctx)
	if validatesWhenCompiling(interp) {
		t.Fatal("the interpreter engine reads as patched")
	}

	_, patched := Runtime(ctx)
	testenv.Need(t, patched, "wazero with apysup's patch (run the tests through make, whose workspace .build/go.work replaces the module)")

	// The patch's other sign, found the same way: a runtime that compiles
	// a binary under a digest its caller gives (init, item 6).
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	if _, ok := rt.(digestCompiler); !ok {
		t.Fatal("the patched runtime has no CompileModuleWithSHA256: every start hashes python.wasm again")
	}
}
