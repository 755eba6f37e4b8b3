/*
 * The guest's libm is the host's (internal/sandbox/wazero/libm.go).
 *
 * Natively the guest's math is glibc's; wasi-libc's is musl's, which
 * rounds sin, cos, tan, atan, atan2, asin, acos, tanh and erf differently
 * in the last bit for 3-11% of arguments, so a script printing a float it
 * computed printed different digits on the two backends. Every double
 * function of the C library that CPython calls and that rounds is defined
 * here as a call to the host module apysup_libm, which answers with the C
 * library the supervisor runs on: the native guest's. Linked as an object,
 * these definitions keep wasi-libc's from being pulled out of libc.a.
 *
 * errno is set as glibc sets it for what CPython reads: EDOM for a NaN
 * from arguments that are not NaN, ERANGE for an infinity from finite
 * ones (an overflow or a pole). CPython ignores ERANGE on underflow.
 */
#include <errno.h>
#include <math.h>

#define IMPORT(name) __attribute__((import_module("apysup_libm"), import_name(#name)))

static double checked1(double x, double r) {
	if (isnan(r) && !isnan(x))
		errno = EDOM;
	else if (isinf(r) && isfinite(x))
		errno = ERANGE;
	return r;
}

static double checked2(double x, double y, double r) {
	if (isnan(r) && !isnan(x) && !isnan(y))
		errno = EDOM;
	else if (isinf(r) && isfinite(x) && isfinite(y))
		errno = ERANGE;
	return r;
}

#define UNARY(name) \
	IMPORT(name) double apysup_host_##name(double); \
	double name(double x) { return checked1(x, apysup_host_##name(x)); }

#define BINARY(name) \
	IMPORT(name) double apysup_host_##name(double, double); \
	double name(double x, double y) { return checked2(x, y, apysup_host_##name(x, y)); }

/* The list of libmUnary and libmBinary in libm.go. */
UNARY(sin)
UNARY(cos)
UNARY(tan)
UNARY(asin)
UNARY(acos)
UNARY(atan)
UNARY(sinh)
UNARY(cosh)
UNARY(tanh)
UNARY(asinh)
UNARY(acosh)
UNARY(atanh)
UNARY(exp)
UNARY(exp2)
UNARY(expm1)
UNARY(log)
UNARY(log2)
UNARY(log10)
UNARY(log1p)
UNARY(cbrt)
UNARY(erf)
UNARY(erfc)
BINARY(atan2)
BINARY(pow)
BINARY(hypot)
