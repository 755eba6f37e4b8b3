// The machine's CPUs as the native guest sees them. Natively
// os.cpu_count() is the number of online CPUs (glibc's sysconf) and
// os.sched_getaffinity(0) is all of them (runc's init resets the
// affinity it inherits); wasi-libc's sysconf answers 1 and WASI has no
// affinity, so a script that sizes a pool by either printed or did
// something else under wazero. The host answers from its own view of the
// machine (apysup_host, internal/sandbox/wazero/hostinfo.go): sysconf's
// CPU counts here, os.sched_getaffinity in _apysup_os.c.

#include <stdint.h>
#include <unistd.h>

#define IMPORT(name) __attribute__((import_module("apysup_host"), import_name(#name)))

// online_cpus writes the mask of the online CPUs (CPU i is bit i % 8 of
// byte i / 8), at most len bytes of it, and returns how many are online:
// 0 when the host cannot tell.
IMPORT(online_cpus) int32_t apysup_host_online_cpus(uint8_t *mask, int32_t len);

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
