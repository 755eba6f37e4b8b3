/*
 * The guest's memory functions, at the engine's speed.
 *
 * Debian's wasi-libc is built for WebAssembly's first version, without
 * the bulk memory operations or SIMD, so its memcpy, memmove and memset
 * are musl's C loops, its memchr reads four bytes at a time and its
 * memcmp and memrchr one: under wazero a bytes or str comparison took
 * 22-29x native's time, a copy 5x, str.rfind of a character over 100x
 * (docs/parity.md, "Speed"; RATIONALE.md, "The guest's memory
 * functions"). This file alone is compiled with -mbulk-memory and
 * -msimd128: long copies and fills are memory.copy and memory.fill
 * (wazero runs them as Go's memmove), comparisons and searches take
 * sixteen bytes at a time (wazero compiles SIMD to SSE). Linked as an
 * object, these definitions keep wasi-libc's from being pulled out of
 * libc.a (its memrchr is a weak alias, which this one overrides).
 *
 * Compiled with -fno-builtin: the compiler must not turn a loop here back
 * into a call of the function it defines.
 */
#include <stddef.h>
#include <stdint.h>
#include <wasm_simd128.h>

/*
 * A copy or a fill of fewer than SMALL bytes stays in wasm, eight bytes at
 * a time: memory.copy and memory.fill are calls out of the compiled code
 * into Go, which cost more than the bytes they move when they are few
 * (the interpreter copies many short arrays and strings).
 */
#define SMALL 32

static inline uint64_t load64(const unsigned char *p)
{
	uint64_t w;
	__builtin_memcpy(&w, p, 8); /* one i64.load: the size is constant */
	return w;
}

static inline void store64(unsigned char *p, uint64_t w)
{
	__builtin_memcpy(p, &w, 8);
}

/* A short copy forwards: each word is read before the write that could reach it. */
static inline void copy_forward(unsigned char *d, const unsigned char *s, size_t n)
{
	for (; n >= 8; n -= 8, d += 8, s += 8)
		store64(d, load64(s));
	for (; n; n--)
		*d++ = *s++;
}

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	if (n >= SMALL)
		__builtin_memcpy(dst, src, n); /* memory.copy */
	else
		copy_forward(dst, src, n);
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	if (n >= SMALL) {
		__builtin_memmove(dst, src, n); /* memory.copy allows overlap */
		return dst;
	}
	unsigned char *d = dst;
	const unsigned char *s = src;
	if (d <= s) {
		copy_forward(d, s, n);
		return dst;
	}
	/* Backwards, from the end, for the same reason. */
	for (; n >= 8; n -= 8)
		store64(d + n - 8, load64(s + n - 8));
	for (; n; n--)
		d[n - 1] = s[n - 1];
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	if (n >= SMALL) {
		__builtin_memset(dst, c, n); /* memory.fill */
		return dst;
	}
	unsigned char *d = dst;
	uint64_t w = 0x0101010101010101ull * (unsigned char)c;
	for (; n >= 8; n -= 8, d += 8)
		store64(d, w);
	for (; n; n--)
		*d++ = (unsigned char)c;
	return dst;
}

/*
 * memcmp compares sixteen bytes at a time (wasm loads need no alignment)
 * and answers as musl's does: the difference of the first differing
 * bytes, as unsigned chars.
 */
int memcmp(const void *vl, const void *vr, size_t n)
{
	const unsigned char *l = vl, *r = vr;
	for (; n >= 16; n -= 16, l += 16, r += 16) {
		int same = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(l), wasm_v128_load(r)));
		if (same != 0xffff) {
			int i = __builtin_ctz(~same);
			return l[i] - r[i];
		}
	}
	if (n >= 8 && load64(l) != load64(r))
		n = 8; /* the difference is in these eight */
	else if (n >= 8)
		n -= 8, l += 8, r += 8;
	for (; n && *l == *r; n--, l++, r++)
		;
	return n ? *l - *r : 0;
}

/*
 * memchr reads sixteen bytes at a time, every load aligned: an aligned
 * load never crosses the end of linear memory (a multiple of 64 KiB), so a
 * caller that passes more than its buffer holds (wasi-libc's strnlen does,
 * as musl allows) cannot make it trap. The first block is the aligned one
 * that holds src, its bytes before src masked off; the last is masked at n.
 */
void *memchr(const void *src, int c, size_t n)
{
	const unsigned char *s = src;
	if (n == 0)
		return 0;
	v128_t want = wasm_i8x16_splat((int8_t)(unsigned char)c);
	size_t off = (uintptr_t)s & 15;
	const unsigned char *block = s - off;
	unsigned hit = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(block), want));
	hit &= 0xffffu << off;
	if (n < 16 - off)
		hit &= (1u << (off + n)) - 1;
	if (hit)
		return (void *)(block + __builtin_ctz(hit));
	if (n <= 16 - off)
		return 0;
	n -= 16 - off;
	for (block += 16; n >= 16; n -= 16, block += 16) {
		hit = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(block), want));
		if (hit)
			return (void *)(block + __builtin_ctz(hit));
	}
	if (n) {
		hit = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(block), want)) & ((1u << n) - 1);
		if (hit)
			return (void *)(block + __builtin_ctz(hit));
	}
	return 0;
}

/* memrchr searches from the end, sixteen bytes at a time. */
void *memrchr(const void *src, int c, size_t n)
{
	const unsigned char *s = src;
	unsigned char ch = (unsigned char)c;
	v128_t want = wasm_i8x16_splat((int8_t)ch);
	for (; n >= 16; n -= 16) {
		int hit = wasm_i8x16_bitmask(wasm_i8x16_eq(wasm_v128_load(s + n - 16), want));
		if (hit)
			return (void *)(s + n - 16 + (31 - __builtin_clz(hit)));
	}
	for (; n; n--)
		if (s[n - 1] == ch)
			return (void *)(s + n - 1);
	return 0;
}

/* bcmp is memcmp's equality-only form, which the compiler calls for
   comparisons whose sign is not used. */
int bcmp(const void *l, const void *r, size_t n)
{
	return memcmp(l, r, n);
}
