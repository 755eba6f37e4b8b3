/* util-linux's c.h includes <grp.h>, which wasi-libc has not; libuuid
 * uses nothing of it. */
