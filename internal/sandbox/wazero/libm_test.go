package wazero

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/testenv"
)

// libmDomain is where each function is sampled: inside its domain, so the
// native interpreter answers rather than raises.
var libmDomain = map[string][2]float64{
	"asin": {-1, 1}, "acos": {-1, 1}, "atanh": {-0.999, 0.999}, "acosh": {1, 1e3},
	"log": {1e-300, 1e300}, "log2": {1e-300, 1e300}, "log10": {1e-300, 1e300}, "log1p": {-0.999, 1e6},
	"exp": {-700, 700}, "exp2": {-1000, 1000}, "expm1": {-50, 700}, "sinh": {-700, 700}, "cosh": {-700, 700},
	"pow": {0, 100},
}

// The libm module answers as the native guest's interpreter does, bit for
// bit: the host's C library (Linux with cgo), against /usr/bin/python3.11's
// math module (abs(complex) for hypot: math.hypot is CPython's own).
func TestHostLibmIsTheNativeGuests(t *testing.T) {
	testenv.Need(t, hostLibmIsC, "cgo on Linux (without it the libm module is Go's math package)")
	_, err := exec.LookPath(sandbox.GuestPython)
	testenv.Need(t, err == nil, sandbox.GuestPython)
	fns := libmFunctions(t)
	// The same arguments on both sides: 2,000 per function from a fixed
	// linear congruential sequence, spread over the function's domain.
	const n = 2000
	args := func(name string) []float64 {
		lo, hi := -20.0, 20.0
		if d, ok := libmDomain[name]; ok {
			lo, hi = d[0], d[1]
		}
		xs := make([]float64, n)
		seed := uint64(len(name)) * 0x9E3779B97F4A7C15
		for i := range xs {
			seed = seed*6364136223846793005 + 1442695040888963407
			xs[i] = lo + (hi-lo)*(float64(seed>>11)/float64(1<<53))
		}
		return xs
	}
	type sample struct {
		Fn   string    `json:"fn"`
		Args []float64 `json:"args"`
	}
	var samples []sample
	for _, name := range slices.Concat(libmUnary, libmBinary) {
		samples = append(samples, sample{name, args(name)})
	}
	in, err := json.Marshal(samples)
	if err != nil {
		t.Fatal(err)
	}
	py := exec.Command(sandbox.GuestPython, "-I", "-S", "-c", `import json, math, sys
out = {}
for s in json.load(sys.stdin):
    fn = s["fn"]
    if fn == "hypot":
        f = lambda x: abs(complex(x, 1.3))
    elif fn in ("atan2", "pow"):
        g = getattr(math, fn)
        f = lambda x, g=g: g(x, 1.3)
    else:
        f = getattr(math, fn)
    out[fn] = [f(x).hex() for x in s["args"]]
json.dump(out, sys.stdout)
`)
	py.Stdin = bytes.NewReader(in)
	var stderr strings.Builder
	py.Stderr = &stderr
	outb, err := py.Output()
	if err != nil {
		t.Fatalf("%s: %v: %s", sandbox.GuestPython, err, stderr.String())
	}
	var native map[string][]string
	if err := json.Unmarshal(outb, &native); err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		f := fns[s.Fn]
		if f == nil || len(native[s.Fn]) != n {
			t.Fatalf("%s: exported %v, %d native answers", s.Fn, f != nil, len(native[s.Fn]))
		}
		differ := 0
		for i, x := range s.Args {
			got := f(x, 1.3)
			want, err := strconv.ParseFloat(native[s.Fn][i], 64)
			if err != nil {
				t.Fatal(err)
			}
			if math.Float64bits(got) != math.Float64bits(want) {
				if differ++; differ <= 3 {
					t.Errorf("%s(%v) = %v, native %v", s.Fn, x, got, want)
				}
			}
		}
		if differ > 0 {
			t.Errorf("%s: %d of %d differ", s.Fn, differ, n)
		}
	}
}

// The WASI build imports every function of the libm module (its
// _apysup_libm.c links before wasi-libc), so none of musl's is left in it.
func TestBuildImportsHostLibm(t *testing.T) {
	in := interpreter(t)
	wasm, err := os.ReadFile(filepath.Join(in.build.Dir, wasmFile))
	if err != nil {
		t.Fatal(err)
	}
	// Decoded by wazero's interpreter: its imports, without compiling.
	ctx := context.Background()
	rt := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfigInterpreter())
	defer rt.Close(ctx)
	mod, err := rt.CompileModule(ctx, wasm)
	if err != nil {
		t.Fatal(err)
	}
	imported := map[string]bool{}
	for _, f := range mod.ImportedFunctions() {
		if mod, name, _ := f.Import(); mod == libmModule {
			imported[name] = true
		}
	}
	for _, name := range slices.Concat(libmUnary, libmBinary) {
		if !imported[name] {
			t.Errorf("python.wasm does not import %s.%s", libmModule, name)
		}
		delete(imported, name)
	}
	if len(imported) > 0 {
		t.Errorf("python.wasm imports %s functions the host does not serve: %v", libmModule, imported)
	}
}

// Each name of the libm module answers with that function, with cgo or
// without: within a few ulps of Go's math package at a point of its
// domain (the native guest's bits are TestHostLibmIsTheNativeGuests's).
func TestHostLibmNamesTheirFunctions(t *testing.T) {
	fns := libmFunctions(t)
	want := map[string]float64{
		"sin": math.Sin(0.7), "cos": math.Cos(0.7), "tan": math.Tan(0.7),
		"asin": math.Asin(0.7), "acos": math.Acos(0.7), "atan": math.Atan(0.7),
		"sinh": math.Sinh(0.7), "cosh": math.Cosh(0.7), "tanh": math.Tanh(0.7),
		"asinh": math.Asinh(0.7), "acosh": math.Acosh(1.7), "atanh": math.Atanh(0.7),
		"exp": math.Exp(0.7), "exp2": math.Exp2(0.7), "expm1": math.Expm1(0.7),
		"log": math.Log(0.7), "log2": math.Log2(0.7), "log10": math.Log10(0.7), "log1p": math.Log1p(0.7),
		"cbrt": math.Cbrt(0.7), "erf": math.Erf(0.7), "erfc": math.Erfc(0.7),
		"atan2": math.Atan2(0.7, 1.3), "pow": math.Pow(0.7, 1.3), "hypot": math.Hypot(0.7, 1.3),
	}
	if len(fns) != len(want) {
		t.Fatalf("%d functions exported, want %d", len(fns), len(want))
	}
	for name, w := range want {
		f := fns[name]
		if f == nil {
			t.Errorf("%s not exported", name)
			continue
		}
		x := 0.7
		if name == "acosh" {
			x = 1.7
		}
		if got := f(x, 1.3); math.Abs(got-w) > 4e-16*math.Abs(w) {
			t.Errorf("%s = %v, want %v", name, got, w)
		}
	}
}

// libmFunctions are the libm module's functions by name, called as the
// guest's imports call them (wazero forbids calling a host module's
// functions from Go through the module); a unary one ignores y.
func libmFunctions(t *testing.T) map[string]func(x, y float64) float64 {
	t.Helper()
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	t.Cleanup(func() { rt.Close(ctx) })
	if err := exportLibm(ctx, rt); err != nil {
		t.Fatal(err)
	}
	fns := map[string]func(x, y float64) float64{}
	for name, def := range rt.Module(libmModule).ExportedFunctionDefinitions() {
		f := def.GoFunction().(api.GoFunction)
		fns[name] = func(x, y float64) float64 {
			stack := []uint64{api.EncodeF64(x), api.EncodeF64(y)}
			f.Call(ctx, stack)
			return api.DecodeF64(stack[0])
		}
	}
	return fns
}
