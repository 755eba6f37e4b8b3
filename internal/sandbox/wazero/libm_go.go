//go:build !cgo || !linux

package wazero

import "math"

// hostLibmIsC: without cgo on Linux the libm module answers with Go's math
// package (libm.go).
const hostLibmIsC = false

// Without cgo the guest's libm is Go's math package (libm.go), by C name,
// in the order of libmUnary and libmBinary (a name missing here panics at
// start, not at a guest's call).
var (
	goLibm1 = inOrder(libmUnary, map[string]func(float64) float64{
		"sin": math.Sin, "cos": math.Cos, "tan": math.Tan,
		"asin": math.Asin, "acos": math.Acos, "atan": math.Atan,
		"sinh": math.Sinh, "cosh": math.Cosh, "tanh": math.Tanh,
		"asinh": math.Asinh, "acosh": math.Acosh, "atanh": math.Atanh,
		"exp": math.Exp, "exp2": math.Exp2, "expm1": math.Expm1,
		"log": math.Log, "log2": math.Log2, "log10": math.Log10, "log1p": math.Log1p,
		"cbrt": math.Cbrt, "erf": math.Erf, "erfc": math.Erfc,
	})
	goLibm2 = inOrder(libmBinary, map[string]func(float64, float64) float64{
		"atan2": math.Atan2, "pow": math.Pow, "hypot": math.Hypot,
	})
)

func inOrder[F any](names []string, byName map[string]F) []F {
	fs := make([]F, len(names))
	for i, name := range names {
		f, ok := byName[name]
		if !ok {
			panic("wazero: no Go function for libm's " + name)
		}
		fs[i] = f
	}
	return fs
}

func hostLibm1(i int, x float64) float64 { return goLibm1[i](x) }

func hostLibm2(i int, x, y float64) float64 { return goLibm2[i](x, y) }
