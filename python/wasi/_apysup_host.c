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
// sysconf's other answers: glibc's. wasi-libc answered -1 (no limit) for
// many of glibc's limits (the line length, bc's, regex's and the
// threads'), musl's constants for others (RE_DUP_MAX 255, NGROUPS_MAX 32)
// and EINVAL for the message queues', and had 40 of CPython's names not
// at all (include/unistd.h adds them, with glibc's numbers). Every name
// CPython lists now answers as glibc on Linux: a constant of glibc's
// table, or, for the six that glibc reads of the process's rlimits or the
// kernel (the argument space, the processes, the supplementary groups,
// the open files, the queued signals, the smallest signal stack), the
// host's answer (apysup_host.sysconf_limits; the open files are the run's
// limit, the guest's RLIMIT_NOFILE natively). Four names describe the C
// data model and keep wasm32's (ILP32) answers, as sys.maxsize does:
// LONG_BIT, UINT_MAX (too large for wasm32's long: -1, as on i386) and
// XBS5_ILP32_OFFBIG and XBS5_LP64_OFF64. Names outside CPython's list
// are wasi-libc's.
//
// pathconf and fpathconf (fpathconf wrapped: musl's pathconf calls it
// without the path): four answers glibc gives for every file differ from
// musl's table: PIPE_BUF is 4096 (musl: -1), SYNC_IO -1 (musl: 1), and
// the two transfer sizes glibc does not know are -1 (musl: 4096). Two
// answers glibc reads of the file system stay musl's: FILESIZEBITS and
// LINK_MAX (natively 32 and 127 on the guest's tmpfs mounts, 64 and
// 65000 on an ext4 root; musl answers 64 and 8 everywhere).
//
// The guest's pid: natively the guest is pid 10 of its sandbox's pid
// namespace, the child of its init (pid 1), which takes the pids below it
// (internal/sandbox/native/containerinit/guestinit_linux.c); wasi-libc's
// emulated getpid answers 42. os.getpid,
// logging's %(process)d, tempfile's and os.kill's own-pid checks read it.
//
// os.nice, which wasi-libc lacks: the guest's niceness kept here, with
// Linux's rules. It changes nothing of how wazero runs the guest, as a
// native guest's niceness changes nothing of its CPU quota.
// os.getpriority and os.setpriority read and raise it through nice()
// (wasi-os-ids.patch, with init's niceness and the process groups).

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

// sysconf_limits writes glibc's answers for the names below that depend
// on the process or the kernel (-1: no limit), in LIMIT_ order, and
// returns LIMIT_COUNT, or 0 when the host cannot tell.
IMPORT(sysconf_limits) int32_t apysup_host_sysconf_limits(int64_t *limits);

// The order of sysconf_limits' words (internal/sandbox/wazero/hostinfo.go).
enum {
	LIMIT_ARG_MAX,
	LIMIT_CHILD_MAX,
	LIMIT_NGROUPS_MAX,
	LIMIT_OPEN_MAX,
	LIMIT_SIGQUEUE_MAX,
	LIMIT_MINSIGSTKSZ,
	LIMIT_COUNT,
};

// memory_pages writes the page size, the physical pages and the available
// pages, and returns 3, or 0 when the host cannot tell.
IMPORT(memory_pages) int32_t apysup_host_memory_pages(uint64_t *pages);

int apysup_online_cpus(unsigned char *mask, int len)
{
	return apysup_host_online_cpus(mask, len);
}

#define GUEST_PID 10

// getpid, defined here so that libwasi-emulated-getpid's is not linked.
pid_t getpid(void)
{
	return GUEST_PID;
}

long __real_sysconf(int name);

enum { ANSWER_WASI_LIBC, ANSWER_VALUE, ANSWER_HOST, ANSWER_INVALID };

struct answer {
	signed char kind;
	signed char limit; // ANSWER_HOST: the LIMIT_ word
	long value;        // ANSWER_VALUE
};

#define VALUE(v) { ANSWER_VALUE, 0, (v) }
#define HOST(i) { ANSWER_HOST, (i), 0 }
#define INVALID { ANSWER_INVALID, 0, 0 }

// glibc 2.36's sysconf on x86-64 Linux for every name of CPython's
// os.sysconf_names but the CPUs' and the memory's (below).
static const struct answer glibc_sysconf[] = {
	[_SC_ARG_MAX] = HOST(LIMIT_ARG_MAX),
	[_SC_CHILD_MAX] = HOST(LIMIT_CHILD_MAX),
	[_SC_CLK_TCK] = VALUE(100),
	[_SC_NGROUPS_MAX] = HOST(LIMIT_NGROUPS_MAX),
	[_SC_OPEN_MAX] = HOST(LIMIT_OPEN_MAX),
	[_SC_STREAM_MAX] = VALUE(16),
	[_SC_TZNAME_MAX] = VALUE(-1),
	[_SC_JOB_CONTROL] = VALUE(1),
	[_SC_SAVED_IDS] = VALUE(1),
	[_SC_REALTIME_SIGNALS] = VALUE(200809),
	[_SC_PRIORITY_SCHEDULING] = VALUE(200809),
	[_SC_TIMERS] = VALUE(200809),
	[_SC_ASYNCHRONOUS_IO] = VALUE(200809),
	[_SC_PRIORITIZED_IO] = VALUE(200809),
	[_SC_SYNCHRONIZED_IO] = VALUE(200809),
	[_SC_FSYNC] = VALUE(200809),
	[_SC_MAPPED_FILES] = VALUE(200809),
	[_SC_MEMLOCK] = VALUE(200809),
	[_SC_MEMLOCK_RANGE] = VALUE(200809),
	[_SC_MEMORY_PROTECTION] = VALUE(200809),
	[_SC_MESSAGE_PASSING] = VALUE(200809),
	[_SC_SEMAPHORES] = VALUE(200809),
	[_SC_SHARED_MEMORY_OBJECTS] = VALUE(200809),
	[_SC_AIO_LISTIO_MAX] = VALUE(-1),
	[_SC_AIO_MAX] = VALUE(-1),
	[_SC_AIO_PRIO_DELTA_MAX] = VALUE(20),
	[_SC_DELAYTIMER_MAX] = VALUE(2147483647),
	[_SC_MQ_OPEN_MAX] = VALUE(-1),
	[_SC_MQ_PRIO_MAX] = VALUE(32768),
	[_SC_VERSION] = VALUE(200809),
	[_SC_RTSIG_MAX] = VALUE(32),
	[_SC_SEM_NSEMS_MAX] = VALUE(-1),
	[_SC_SEM_VALUE_MAX] = VALUE(2147483647),
	[_SC_SIGQUEUE_MAX] = HOST(LIMIT_SIGQUEUE_MAX),
	[_SC_TIMER_MAX] = VALUE(-1),
	[_SC_BC_BASE_MAX] = VALUE(99),
	[_SC_BC_DIM_MAX] = VALUE(2048),
	[_SC_BC_SCALE_MAX] = VALUE(99),
	[_SC_BC_STRING_MAX] = VALUE(1000),
	[_SC_COLL_WEIGHTS_MAX] = VALUE(255),
	[_SC_EQUIV_CLASS_MAX] = INVALID,
	[_SC_EXPR_NEST_MAX] = VALUE(32),
	[_SC_LINE_MAX] = VALUE(2048),
	[_SC_RE_DUP_MAX] = VALUE(32767),
	[_SC_CHARCLASS_NAME_MAX] = VALUE(2048),
	[_SC_2_VERSION] = VALUE(200809),
	[_SC_2_C_BIND] = VALUE(200809),
	[_SC_2_C_DEV] = VALUE(200809),
	[_SC_2_FORT_DEV] = VALUE(-1),
	[_SC_2_FORT_RUN] = VALUE(-1),
	[_SC_2_SW_DEV] = VALUE(200809),
	[_SC_2_LOCALEDEF] = VALUE(200809),
	[_SC_PII] = VALUE(-1),
	[_SC_PII_XTI] = VALUE(-1),
	[_SC_PII_SOCKET] = VALUE(-1),
	[_SC_PII_INTERNET] = VALUE(-1),
	[_SC_PII_OSI] = VALUE(-1),
	[_SC_POLL] = VALUE(-1),
	[_SC_SELECT] = VALUE(-1),
	[_SC_IOV_MAX] = VALUE(1024),
	[_SC_PII_INTERNET_STREAM] = VALUE(-1),
	[_SC_PII_INTERNET_DGRAM] = VALUE(-1),
	[_SC_PII_OSI_COTS] = VALUE(-1),
	[_SC_PII_OSI_CLTS] = VALUE(-1),
	[_SC_PII_OSI_M] = VALUE(-1),
	[_SC_T_IOV_MAX] = VALUE(-1),
	[_SC_THREADS] = VALUE(200809),
	[_SC_THREAD_SAFE_FUNCTIONS] = VALUE(200809),
	[_SC_GETGR_R_SIZE_MAX] = VALUE(1024),
	[_SC_GETPW_R_SIZE_MAX] = VALUE(1024),
	[_SC_LOGIN_NAME_MAX] = VALUE(256),
	[_SC_TTY_NAME_MAX] = VALUE(32),
	[_SC_THREAD_DESTRUCTOR_ITERATIONS] = VALUE(4),
	[_SC_THREAD_KEYS_MAX] = VALUE(1024),
	[_SC_THREAD_STACK_MIN] = VALUE(16384),
	[_SC_THREAD_THREADS_MAX] = VALUE(-1),
	[_SC_THREAD_ATTR_STACKADDR] = VALUE(200809),
	[_SC_THREAD_ATTR_STACKSIZE] = VALUE(200809),
	[_SC_THREAD_PRIORITY_SCHEDULING] = VALUE(200809),
	[_SC_THREAD_PRIO_INHERIT] = VALUE(200809),
	[_SC_THREAD_PRIO_PROTECT] = VALUE(200809),
	[_SC_THREAD_PROCESS_SHARED] = VALUE(200809),
	[_SC_ATEXIT_MAX] = VALUE(2147483647),
	[_SC_PASS_MAX] = VALUE(8192),
	[_SC_XOPEN_VERSION] = VALUE(700),
	[_SC_XOPEN_XCU_VERSION] = VALUE(4),
	[_SC_XOPEN_UNIX] = VALUE(1),
	[_SC_XOPEN_CRYPT] = VALUE(-1),
	[_SC_XOPEN_ENH_I18N] = VALUE(1),
	[_SC_XOPEN_SHM] = VALUE(1),
	[_SC_2_CHAR_TERM] = VALUE(200809),
	[_SC_2_C_VERSION] = VALUE(200809),
	[_SC_2_UPE] = VALUE(-1),
	[_SC_XOPEN_XPG2] = VALUE(1),
	[_SC_XOPEN_XPG3] = VALUE(1),
	[_SC_XOPEN_XPG4] = VALUE(1),
	[_SC_CHAR_BIT] = VALUE(8),
	[_SC_CHAR_MAX] = VALUE(127),
	[_SC_CHAR_MIN] = VALUE(CHAR_MIN), // char is signed on both
	[_SC_INT_MAX] = VALUE(2147483647),
	[_SC_INT_MIN] = VALUE(INT_MIN),
	[_SC_LONG_BIT] = VALUE(LONG_BIT), // wasm32's: 32
	[_SC_WORD_BIT] = VALUE(32),
	[_SC_MB_LEN_MAX] = VALUE(16),
	[_SC_NZERO] = VALUE(20),
	[_SC_SSIZE_MAX] = VALUE(32767),
	[_SC_SCHAR_MAX] = VALUE(127),
	[_SC_SCHAR_MIN] = VALUE(-128),
	[_SC_SHRT_MAX] = VALUE(32767),
	[_SC_SHRT_MIN] = VALUE(-32768),
	[_SC_UCHAR_MAX] = VALUE(255),
	[_SC_UINT_MAX] = VALUE(-1), // UINT_MAX in wasm32's long, as on i386
	[_SC_ULONG_MAX] = VALUE(-1),
	[_SC_USHRT_MAX] = VALUE(65535),
	[_SC_NL_ARGMAX] = VALUE(4096),
	[_SC_NL_LANGMAX] = VALUE(2048),
	[_SC_NL_MSGMAX] = VALUE(2147483647),
	[_SC_NL_NMAX] = VALUE(2147483647),
	[_SC_NL_SETMAX] = VALUE(2147483647),
	[_SC_NL_TEXTMAX] = VALUE(2147483647),
	[_SC_XBS5_ILP32_OFF32] = VALUE(-1),
	[_SC_XBS5_ILP32_OFFBIG] = VALUE(1), // wasm32's data model
	[_SC_XBS5_LP64_OFF64] = VALUE(-1),
	[_SC_XBS5_LPBIG_OFFBIG] = VALUE(-1),
	[_SC_XOPEN_LEGACY] = VALUE(1),
	[_SC_XOPEN_REALTIME] = VALUE(1),
	[_SC_XOPEN_REALTIME_THREADS] = VALUE(1),
	[_SC_MINSIGSTKSZ] = HOST(LIMIT_MINSIGSTKSZ),
};

// host_limit is the host's answer for one LIMIT_ word, in wasm32's long
// (a larger limit is as large as it can say); ok is 0 when the host
// cannot tell.
static long host_limit(int limit, int *ok)
{
	int64_t limits[LIMIT_COUNT];
	*ok = apysup_host_sysconf_limits(limits) == LIMIT_COUNT;
	if (!*ok)
		return 0;
	int64_t v = limits[limit];
	return v > LONG_MAX ? LONG_MAX : v < 0 ? -1 : (long)v;
}

// sysconf, wrapped (-Wl,--wrap=sysconf): the CPU counts, the memory pages
// and the limits are the host's, the rest glibc's table.
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
	if (name >= 0 && (unsigned)name < sizeof glibc_sysconf / sizeof glibc_sysconf[0]) {
		const struct answer *a = &glibc_sysconf[name];
		switch (a->kind) {
		case ANSWER_VALUE:
			return a->value;
		case ANSWER_INVALID:
			errno = EINVAL;
			return -1;
		case ANSWER_HOST: {
			int ok;
			long v = host_limit(a->limit, &ok);
			if (ok)
				return v;
			break;
		}
		}
	}
	return __real_sysconf(name);
}

long __real_fpathconf(int fd, int name);

long __wrap_fpathconf(int fd, int name)
{
	switch (name) {
	case _PC_PIPE_BUF:
		return 4096;
	case _PC_SYNC_IO:
	case _PC_REC_INCR_XFER_SIZE:
	case _PC_REC_MAX_XFER_SIZE:
		return -1;
	}
	return __real_fpathconf(fd, name);
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

// os.sync: the guest's writes are the host kernel's as soon as they are
// made (every write is the host's write on its file), so there is nothing
// of the guest's left to flush; natively sync would also flush the host's
// disks, which the guest cannot observe. wasi-libc has none.
void sync(void)
{
}
