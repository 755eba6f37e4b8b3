// getrlimit, setrlimit, prlimit and getrusage for CPython's own resource
// module under WASI (include/sys/resource.h; build.sh builds the module),
// answered as the native guest's: the host keeps the guest's limits and
// its init's, with Linux's checks and their effects
// (internal/sandbox/wazero/rlimit.go), and measures its usage.
//
// A guest has one process: pid 0 and its own pid are it, pid 1 is its
// init, whose limits are the sandbox's, and any other pid is no process
// (ESRCH). RUSAGE_SELF and RUSAGE_THREAD are the guest's one thread;
// RUSAGE_CHILDREN is all zeros, as for a native guest that started no
// process. The host's refusals are Linux's errnos (EPERM: a hard limit
// raised; EINVAL: a soft limit above its hard one), which the module
// turns into its ValueErrors.

#define _WASI_EMULATED_GETPID // getpid is _apysup_host.c's
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define IMPORT(name) __attribute__((import_module("apysup_host"), import_name(#name)))

// rlimit reads the new soft and hard limits at limits[0] and [1] (when set
// is 1) and writes the old ones at limits[2] and [3]; it answers 0, or 1
// (EPERM) or 2 (EINVAL).
IMPORT(rlimit) int32_t apysup_host_rlimit(int32_t who, int32_t resource, int32_t set, uint64_t *limits);

// rusage writes the guest's usage in the words below and answers how many,
// or 0 when the host cannot tell.
IMPORT(rusage) int32_t apysup_host_rusage(uint64_t *usage);

enum { WHO_GUEST, WHO_INIT };
enum { USAGE_UTIME_US, USAGE_STIME_US, USAGE_MAXRSS, USAGE_MINFLT, USAGE_MAJFLT, USAGE_INBLOCK,
	USAGE_OUBLOCK, USAGE_NVCSW, USAGE_NIVCSW, USAGE_COUNT };

static int limits_of(int32_t who, int resource, const struct rlimit *new, struct rlimit *old)
{
	uint64_t words[4] = {0};
	if (new != NULL) {
		words[0] = new->rlim_cur;
		words[1] = new->rlim_max;
	}
	switch (apysup_host_rlimit(who, resource, new != NULL, words)) {
	case 0:
		break;
	case 1:
		errno = EPERM;
		return -1;
	default:
		errno = EINVAL;
		return -1;
	}
	if (old != NULL) {
		old->rlim_cur = words[2];
		old->rlim_max = words[3];
	}
	return 0;
}

int prlimit(pid_t pid, int resource, const struct rlimit *new, struct rlimit *old)
{
	int32_t who;
	if (pid == 0 || pid == getpid())
		who = WHO_GUEST;
	else if (pid == 1)
		who = WHO_INIT;
	else {
		errno = ESRCH;
		return -1;
	}
	return limits_of(who, resource, new, old);
}

int getrlimit(int resource, struct rlimit *rl)
{
	return limits_of(WHO_GUEST, resource, NULL, rl);
}

int setrlimit(int resource, const struct rlimit *rl)
{
	return limits_of(WHO_GUEST, resource, rl, NULL);
}

int getrusage(int who, struct rusage *ru)
{
	if (who != RUSAGE_SELF && who != RUSAGE_THREAD && who != RUSAGE_CHILDREN) {
		errno = EINVAL;
		return -1;
	}
	memset(ru, 0, sizeof *ru);
	if (who == RUSAGE_CHILDREN)
		return 0;
	uint64_t u[USAGE_COUNT];
	if (apysup_host_rusage(u) != USAGE_COUNT) {
		errno = ENOSYS;
		return -1;
	}
	ru->ru_utime.tv_sec = (time_t)(u[USAGE_UTIME_US] / 1000000);
	ru->ru_utime.tv_usec = (suseconds_t)(u[USAGE_UTIME_US] % 1000000);
	ru->ru_stime.tv_sec = (time_t)(u[USAGE_STIME_US] / 1000000);
	ru->ru_stime.tv_usec = (suseconds_t)(u[USAGE_STIME_US] % 1000000);
	ru->ru_maxrss = (long)u[USAGE_MAXRSS];
	ru->ru_minflt = (long)u[USAGE_MINFLT];
	ru->ru_majflt = (long)u[USAGE_MAJFLT];
	ru->ru_inblock = (long)u[USAGE_INBLOCK];
	ru->ru_oublock = (long)u[USAGE_OUBLOCK];
	ru->ru_nvcsw = (long)u[USAGE_NVCSW];
	ru->ru_nivcsw = (long)u[USAGE_NIVCSW];
	return 0;
}
