package wazero

import (
	"context"
	"fmt"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The guest's libm is the host's. Natively the guest's math is glibc's
// libm (its FMA variants on a CPU that has FMA); compiled to WASI it was
// wasi-libc's, musl's, whose sin, cos, tan, atan, atan2, asin, acos,
// tanh and erf round differently in the last bit for 3-11% of arguments
// (exp, pow, expm1 about 0.1%): a script that prints a float it computed
// printed different digits on the two backends. The WASI build defines
// every double function of the C library that rounds as a call to this
// module (python/wasi/_apysup_libm.c), and the host answers with the C
// library it runs on, the native guest's own (libm_cgo.go), bit for bit.
// Without cgo the answers are Go's math package's (libm_go.go): no worse
// than musl's, not the native guest's.
//
// Each is a pure function of its arguments: no guest memory, no state, no
// error but the value (the C side sets errno from it as glibc does).

// libmModule is the host module the WASI build imports its libm from.
const libmModule = "apysup_libm"

// libmUnary and libmBinary are the functions, by C name, in the order
// hostLibm1 and hostLibm2 number them: those CPython calls (math, cmath,
// float and complex powers) whose result is rounded. The exact ones
// (sqrt, fmod, floor, ldexp, frexp, modf, copysign, nextafter) agree
// everywhere, and CPython computes math.gamma and math.lgamma itself.
var (
	libmUnary = []string{
		"sin", "cos", "tan", "asin", "acos", "atan",
		"sinh", "cosh", "tanh", "asinh", "acosh", "atanh",
		"exp", "exp2", "expm1", "log", "log2", "log10", "log1p",
		"cbrt", "erf", "erfc",
	}
	libmBinary = []string{"atan2", "pow", "hypot"}
)

// exportLibm instantiates the libm module in rt.
func exportLibm(ctx context.Context, rt wazero.Runtime) error {
	b := rt.NewHostModuleBuilder(libmModule)
	f64 := api.ValueTypeF64
	for i, name := range libmUnary {
		b.NewFunctionBuilder().
			WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) {
				stack[0] = api.EncodeF64(hostLibm1(i, api.DecodeF64(stack[0])))
			}), []api.ValueType{f64}, []api.ValueType{f64}).
			WithParameterNames("x").
			Export(name)
	}
	for i, name := range libmBinary {
		b.NewFunctionBuilder().
			WithGoFunction(api.GoFunc(func(_ context.Context, stack []uint64) {
				stack[0] = api.EncodeF64(hostLibm2(i, api.DecodeF64(stack[0]), api.DecodeF64(stack[1])))
			}), []api.ValueType{f64, f64}, []api.ValueType{f64}).
			WithParameterNames("x", "y").
			Export(name)
	}
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("wazero: libm module: %w", err)
	}
	return nil
}
