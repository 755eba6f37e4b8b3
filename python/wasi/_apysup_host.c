// The machine and the guest's processes as the native guest sees them,
// where wasi-libc has nothing or a constant.
//
// CPUs. Natively os.cpu_count() is the number of online CPUs (glibc's
// sysconf) and os.sched_getaffinity(0) is all of them (runc's init resets
// the affinity it inherits); wasi-libc's sysconf answers 1 and WASI has no
// affinity, so a script that sizes a pool by either printed or did
// something else under wazero. The host answers from its own view of the
// machine (apysup_host, internal/sandbox/wazero/hostinfo.go): sysconf's
// CPU counts here, os.sched_getaffinity in _apysup_os.c.
//
// The load average (os.getloadavg): the host's, as glibc reads it from
// sysinfo(2) natively.
//
// os.nice, which wasi-libc lacks: the guest's niceness kept here, with
// Linux's rules. It changes nothing of how wazero runs the guest, as a
// native guest's niceness changes nothing of its CPU quota.
// os.getpriority and os.setpriority stay absent: posixmodule.c takes them
// from <sys/resource.h>, whose WASI version would bring the resource
// module's rlimits, which wasi-libc has not.

#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#define IMPORT(name) __attribute__((import_module("apysup_host"), import_name(#name)))

// online_cpus writes the mask of the online CPUs (CPU i is bit i % 8 of
// byte i / 8), at most len bytes of it, and returns how many are online:
// 0 when the host cannot tell.
IMPORT(online_cpus) int32_t apysup_host_online_cpus(uint8_t *mask, int32_t len);

// loadavg writes the 1, 5 and 15 minute load averages, and returns 3, or
// 0 when the host cannot tell.
IMPORT(loadavg) int32_t apysup_host_loadavg(double *avg);

int apysup_online_cpus(unsigned char *mask, int len)
{
	return apysup_host_online_cpus(mask, len);
}

long __real_sysconf(int name);

// sysconf, wrapped (-Wl,--wrap=sysconf): the CPU counts are the host's.
long __wrap_sysconf(int name)
{
	if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) {
		int32_t n = apysup_host_online_cpus(0, 0);
		if (n > 0)
			return n;
	}
	return __real_sysconf(name);
}

int getloadavg(double *avg, int n)
{
	double all[3];
	if (n < 0 || apysup_host_loadavg(all) != 3) {
		errno = ENOSYS;
		return -1;
	}
	if (n > 3)
		n = 3;
	for (int i = 0; i < n; i++)
		avg[i] = all[i];
	return n;
}

// The guest's niceness, for nice(): Linux's rules for a user without
// CAP_SYS_NICE under RLIMIT_NICE 0, glibc's answers. It is clamped to
// -20..19 and never lowered (EPERM); the call answers the niceness after
// it.
#define MIN_NICE (-20)
#define MAX_NICE 19

static int own_nice;

int nice(int inc)
{
	long prio = (long)own_nice + inc;
	if (prio < MIN_NICE)
		prio = MIN_NICE;
	if (prio > MAX_NICE)
		prio = MAX_NICE;
	if (prio < own_nice) {
		errno = EPERM;
		return -1;
	}
	own_nice = (int)prio;
	return own_nice;
}
