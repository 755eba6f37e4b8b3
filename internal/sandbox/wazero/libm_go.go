//go:build !cgo || !linux

package wazero

import "math"

// hostLibmIsC: without cgo on Linux the libm module answers with Go's math
// package (libm.go).
const hostLibmIsC = false

// Without cgo the guest's libm is Go's math package (libm.go).
var (
	goLibm1 = []func(float64) float64{
		math.Sin, math.Cos, math.Tan, math.Asin, math.Acos, math.Atan,
		math.Sinh, math.Cosh, math.Tanh, math.Asinh, math.Acosh, math.Atanh,
		math.Exp, math.Exp2, math.Expm1, math.Log, math.Log2, math.Log10, math.Log1p,
		math.Cbrt, math.Erf, math.Erfc,
	}
	goLibm2 = []func(float64, float64) float64{math.Atan2, math.Pow, math.Hypot}
)

func hostLibm1(i int, x float64) float64 { return goLibm1[i](x) }

func hostLibm2(i int, x, y float64) float64 { return goLibm2[i](x, y) }
