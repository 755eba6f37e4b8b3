/*
 * sys/resource.h for the WASI build: Linux's resource limits and usage,
 * which wasi-libc lacks (its header has getrusage alone, with two fields
 * and other RUSAGE_ numbers), so that CPython's own resource module builds
 * (build.sh: Modules/Setup.local). _apysup_resource.c implements the
 * functions through the host (apysup_host.rlimit and rusage). The numbers
 * are Linux's x86-64 ones, which the native guest's module answers.
 */
#ifndef _APYSUP_SYS_RESOURCE_H
#define _APYSUP_SYS_RESOURCE_H

/* wasi-libc's two-field struct rusage must never be defined beside this
 * one. */
#define __wasilibc___struct_rusage_h
#define __wasilibc___header_sys_resource_h

#include <sys/time.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef unsigned long long rlim_t;

struct rlimit {
	rlim_t rlim_cur;
	rlim_t rlim_max;
};

struct rusage {
	struct timeval ru_utime;
	struct timeval ru_stime;
	long ru_maxrss;
	long ru_ixrss;
	long ru_idrss;
	long ru_isrss;
	long ru_minflt;
	long ru_majflt;
	long ru_nswap;
	long ru_inblock;
	long ru_oublock;
	long ru_msgsnd;
	long ru_msgrcv;
	long ru_nsignals;
	long ru_nvcsw;
	long ru_nivcsw;
};

int getrlimit(int, struct rlimit *);
int setrlimit(int, const struct rlimit *);
int prlimit(pid_t, int, const struct rlimit *, struct rlimit *);
int getrusage(int, struct rusage *);

#define RUSAGE_SELF 0
#define RUSAGE_CHILDREN (-1)
#define RUSAGE_THREAD 1

#define RLIM_INFINITY (~0ULL)
#define RLIM_SAVED_CUR RLIM_INFINITY
#define RLIM_SAVED_MAX RLIM_INFINITY

#define RLIMIT_CPU 0
#define RLIMIT_FSIZE 1
#define RLIMIT_DATA 2
#define RLIMIT_STACK 3
#define RLIMIT_CORE 4
#define RLIMIT_RSS 5
#define RLIMIT_NPROC 6
#define RLIMIT_NOFILE 7
#define RLIMIT_MEMLOCK 8
#define RLIMIT_AS 9
#define RLIMIT_LOCKS 10
#define RLIMIT_SIGPENDING 11
#define RLIMIT_MSGQUEUE 12
#define RLIMIT_NICE 13
#define RLIMIT_RTPRIO 14
#define RLIMIT_RTTIME 15
#define RLIMIT_NLIMITS 16
#define RLIM_NLIMITS RLIMIT_NLIMITS
/* glibc's other name of RLIMIT_NOFILE, which the module lists too. */
#define RLIMIT_OFILE RLIMIT_NOFILE

#ifdef __cplusplus
}
#endif

#endif
