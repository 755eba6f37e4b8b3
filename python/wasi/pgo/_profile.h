/* Forced into every file of compiler-rt's profile runtime (LLVM's
 * lib/profile) as build.sh compiles it for WASI. The runtime writes its
 * counters with stdio; it also refers to functions WASI lacks (mmap and
 * its kin for the continuous mode, which is never asked for; getpid for a
 * file name's %p; flock to merge into a file shared by processes). Those
 * are renamed to _profile_shim.c's, which fail or do nothing, so that the
 * instrumented python.wasm defines no mmap, getpid or flock of its own:
 * CPython's configure, linking its checks with the runtime, must find
 * what it finds without it. */
#define getpagesize() 65536
#define mmap __apysup_prof_mmap
#define munmap __apysup_prof_munmap
#define madvise __apysup_prof_madvise
#define msync __apysup_prof_msync
#define getpid __apysup_prof_getpid
#define flock __apysup_prof_flock
