//go:build cgo && linux

package wazero

/*
#cgo LDFLAGS: -lm
#include <math.h>

// One call per guest call: the index is libmUnary's or libmBinary's.
static double apysup_libm1(int i, double x) {
	switch (i) {
	case 0: return sin(x);
	case 1: return cos(x);
	case 2: return tan(x);
	case 3: return asin(x);
	case 4: return acos(x);
	case 5: return atan(x);
	case 6: return sinh(x);
	case 7: return cosh(x);
	case 8: return tanh(x);
	case 9: return asinh(x);
	case 10: return acosh(x);
	case 11: return atanh(x);
	case 12: return exp(x);
	case 13: return exp2(x);
	case 14: return expm1(x);
	case 15: return log(x);
	case 16: return log2(x);
	case 17: return log10(x);
	case 18: return log1p(x);
	case 19: return cbrt(x);
	case 20: return erf(x);
	case 21: return erfc(x);
	}
	return NAN;
}

static double apysup_libm2(int i, double x, double y) {
	switch (i) {
	case 0: return atan2(x, y);
	case 1: return pow(x, y);
	case 2: return hypot(x, y);
	}
	return NAN;
}
*/
import "C"

// hostLibmIsC: the libm module answers with the host C library's.
const hostLibmIsC = true

// hostLibm1 is the host C library's libmUnary[i](x).
func hostLibm1(i int, x float64) float64 {
	return float64(C.apysup_libm1(C.int(i), C.double(x)))
}

// hostLibm2 is the host C library's libmBinary[i](x, y).
func hostLibm2(i int, x, y float64) float64 {
	return float64(C.apysup_libm2(C.int(i), C.double(x), C.double(y)))
}
