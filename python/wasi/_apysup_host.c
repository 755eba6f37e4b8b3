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
// Memory (sysconf): natively the page size is the machine's (4096 here)
// and the physical and available pages are sysinfo(2)'s total and free
// memory in pages, so os.sysconf("SC_PAGE_SIZE") *
// os.sysconf("SC_PHYS_PAGES") is the machine's memory; wasi-libc answered
// WebAssembly's 64 KiB page and negative page counts. The host answers
// glibc's three, at each call.
//
// The guest's pid: natively the guest is pid 6 of its sandbox's pid
// namespace, the child of its init (pid 1), after the processes that set
// the sandbox up; wasi-libc's emulated getpid answers 42. os.getpid,
// logging's %(process)d, tempfile's and os.kill's own-pid checks read it.
//
// os.nice, which wasi-libc lacks: the guest's niceness kept here, with
// Linux's rules. It changes nothing of how wazero runs the guest, as a
// native guest's niceness changes nothing of its CPU quota.
// os.getpriority and os.setpriority stay absent: posixmodule.c takes them
// from <sys/resource.h>, whose WASI version would bring the resource
// module's rlimits, which wasi-libc has not.

#include <errno.h>
#include <limits.h>
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

// memory_pages writes the page size, the physical pages and the available
// pages, and returns 3, or 0 when the host cannot tell.
IMPORT(memory_pages) int32_t apysup_host_memory_pages(uint64_t *pages);

int apysup_online_cpus(unsigned char *mask, int len)
{
	return apysup_host_online_cpus(mask, len);
}

#define GUEST_PID 6

// getpid, defined here so that libwasi-emulated-getpid's is not linked.
pid_t getpid(void)
{
	return GUEST_PID;
}

long __real_sysconf(int name);

// sysconf, wrapped (-Wl,--wrap=sysconf): the CPU counts and the memory
// pages are the host's.
long __wrap_sysconf(int name)
{
	if (name == _SC_NPROCESSORS_ONLN || name == _SC_NPROCESSORS_CONF) {
		int32_t n = apysup_host_online_cpus(0, 0);
		if (n > 0)
			return n;
	}
	if (name == _SC_PAGESIZE || name == _SC_PHYS_PAGES || name == _SC_AVPHYS_PAGES) {
		uint64_t pages[3];
		if (apysup_host_memory_pages(pages) == 3) {
			uint64_t v = pages[name == _SC_PAGESIZE ? 0 : name == _SC_PHYS_PAGES ? 1 : 2];
			// wasm32's long: a count past it is as large as it can say.
			return v > LONG_MAX ? LONG_MAX : (long)v;
		}
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
