/* The functions _profile.h renames, for compiler-rt's profile runtime in
 * the instrumented python.wasm of build.sh's profile-guided stage: one
 * process, one thread, writing one file at its exit. */
#include <errno.h>
#include <stddef.h>
#include <sys/types.h>
#include <wasi/api.h>

void *__apysup_prof_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) {
	(void)addr, (void)len, (void)prot, (void)flags, (void)fd, (void)off;
	errno = ENOSYS;
	return (void *)-1;
}

int __apysup_prof_munmap(void *addr, size_t len) {
	(void)addr, (void)len;
	errno = ENOSYS;
	return -1;
}

int __apysup_prof_madvise(void *addr, size_t len, int advice) {
	(void)addr, (void)len, (void)advice;
	errno = ENOSYS;
	return -1;
}

int __apysup_prof_msync(void *addr, size_t len, int flags) {
	(void)addr, (void)len, (void)flags;
	errno = ENOSYS;
	return -1;
}

int __apysup_prof_getpid(void) { return 1; }

/* One writer: nothing to lock against. */
int __apysup_prof_flock(int fd, int op) {
	(void)fd, (void)op;
	return 0;
}

/* No host name: the file's name never asks for one (%h). */
int lprofGetHostName(char *name, int len) {
	(void)name, (void)len;
	return -1;
}

/* The instrumented objects' hook into the runtime (InstrProfilingRuntime.cpp
 * defines it, with a constructor that registers the profile's write with
 * atexit; that file is left out). apysup's runner ends the interpreter with
 * os._exit, which runs no atexit handler: the profile is written at every
 * proc_exit instead (linked with --wrap=__wasi_proc_exit), once. */

int __llvm_profile_runtime;
void __llvm_profile_initialize_file(void);
int __llvm_profile_write_file(void);

__attribute__((constructor)) static void profile_init(void) { __llvm_profile_initialize_file(); }

_Noreturn void __real___wasi_proc_exit(__wasi_exitcode_t code);

_Noreturn void __wrap___wasi_proc_exit(__wasi_exitcode_t code) {
	(void)__llvm_profile_write_file();
	__real___wasi_proc_exit(code);
}
