/* util-linux's c.h includes <pwd.h>, which wasi-libc has not; libuuid
 * uses nothing of it. */
