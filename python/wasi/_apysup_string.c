/*
 * The guest's memory functions, as fast as the engine's own.
 *
 * Debian's wasi-libc is built for WebAssembly without the bulk memory
 * operations, so its memcpy, memmove and memset are musl's C loops, and
 * its memcmp compares one byte at a time: under wazero a bytes or str
 * comparison ran 40x slower than natively, a copy 5x (docs/parity.md,
 * "Speed"). build.sh compiles the whole guest with -mbulk-memory, which
 * turns the compiler's own copies and fills into memory.copy and
 * memory.fill (wazero runs them as Go's memmove); the definitions here
 * serve the calls that remain, from wasi-libc's archive and through
 * function pointers. Linked as an object, they keep wasi-libc's from being
 * pulled out of libc.a.
 *
 * Compiled with -fno-builtin: the compiler must not turn a loop here back
 * into a call of the function it defines.
 */
#include <stddef.h>
#include <stdint.h>

void *memcpy(void *restrict dst, const void *restrict src, size_t n)
{
	__builtin_memcpy(dst, src, n); /* memory.copy */
	return dst;
}

void *memmove(void *dst, const void *src, size_t n)
{
	__builtin_memmove(dst, src, n); /* memory.copy allows overlap */
	return dst;
}

void *memset(void *dst, int c, size_t n)
{
	__builtin_memset(dst, c, n); /* memory.fill */
	return dst;
}

/*
 * memcmp compares eight bytes at a time (wasm loads need no alignment) and
 * answers as musl's does: the difference of the first differing bytes, as
 * unsigned chars. WebAssembly is little-endian, so the first differing
 * byte is the lowest set byte of the words' XOR.
 */
int memcmp(const void *vl, const void *vr, size_t n)
{
	const unsigned char *l = vl, *r = vr;
	for (; n >= 8; n -= 8, l += 8, r += 8) {
		uint64_t a, b;
		__builtin_memcpy(&a, l, 8);
		__builtin_memcpy(&b, r, 8);
		if (a != b) {
			int shift = __builtin_ctzll(a ^ b) & ~7;
			return (int)((a >> shift) & 0xff) - (int)((b >> shift) & 0xff);
		}
	}
	for (; n && *l == *r; n--, l++, r++)
		;
	return n ? *l - *r : 0;
}

/* bcmp is memcmp's equality-only form, which the compiler calls for
   comparisons whose sign is not used. */
int bcmp(const void *l, const void *r, size_t n)
{
	return memcmp(l, r, n);
}
