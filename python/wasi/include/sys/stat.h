/*
 * sys/stat.h for the WASI build: wasi-libc's, and fchmod and fchmodat,
 * which it leaves out with chmod: python/wasi/_apysup_paths.c has them,
 * through the host's apysup_fs.chmod, and build.sh tells configure so
 * (os.fchmod, os.chmod with a descriptor or a dir_fd).
 */
#ifndef _APYSUP_SYS_STAT_H
#define _APYSUP_SYS_STAT_H

#include_next <sys/stat.h>

int fchmod(int, mode_t);
int fchmodat(int, const char *, mode_t, int);

#endif
