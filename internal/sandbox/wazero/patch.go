package wazero

import (
	"context"
	"reflect"
	"runtime/debug"

	"github.com/tetratelabs/wazero"
)

// wazeroModule is the module the backend runs on.
const wazeroModule = "github.com/tetratelabs/wazero"

// Runtime reports the wazero this binary was built against: its version
// ("" where the binary carries no module information, as a test binary)
// and whether it carries apysup's patch (third_party/wazero), with which a
// child that finds python.wasm's compiled code in the compilation cache
// does not validate its functions again. make builds every binary and test
// with the patch (its workspace replaces the module); a plain `go build`
// or `go install` gets wazero as released, which runs the same guests and
// loads each child about 45 ms slower.
func Runtime(ctx context.Context) (version string, patched bool) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, dep := range info.Deps {
			if dep.Path == wazeroModule {
				version = dep.Version
			}
		}
	}
	// The platform's default engine: the compiler where wazero has one (a
	// compiler config panics elsewhere), and the patch changes nothing
	// for the interpreter, which reads as unpatched.
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig())
	defer rt.Close(ctx)
	return version, validatesWhenCompiling(rt)
}

// validatesWhenCompiling reports whether rt's engine has the method the
// patch adds to wazero's compiler (ValidatesPendingFunctions), found by
// the engine's type: wazero exposes no other sign of it. Anything
// unexpected in wazero's layout reads as unpatched.
func validatesWhenCompiling(rt wazero.Runtime) bool {
	v := reflect.ValueOf(rt)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return false
	}
	store := v.Elem().FieldByName("store")
	if store.Kind() != reflect.Pointer || store.IsNil() || store.Elem().Kind() != reflect.Struct {
		return false
	}
	engine := store.Elem().FieldByName("Engine")
	if engine.Kind() != reflect.Interface || engine.IsNil() {
		return false
	}
	_, ok := engine.Elem().Type().MethodByName("ValidatesPendingFunctions")
	return ok
}

// digestCompiler is wazero's runtime as patched (third_party/wazero, items
// 6 and 9): CompileModule of a binary whose SHA-256 the caller gives,
// which names the module instead of a hash of the binary, and whose
// function bodies and data segments stay slices of it (the caller keeps
// it unchanged, and mapped, while the module lives: Load's copy, or a
// child's mapping of python.wasm, which it never unmaps). Found by a type
// assertion, so that a build against wazero as released compiles and
// hashes instead.
type digestCompiler interface {
	CompileModuleWithSHA256(ctx context.Context, binary []byte, sha256 [32]byte) (wazero.CompiledModule, error)
}
