/*
 * A guest that signals itself ends as the native guest does, and
 * strsignal describes signals in glibc's words. build.sh links this
 * object with -Wl,--wrap=raise,--wrap=abort,--wrap=strsignal.
 *
 * WASI has no signals; wasi-libc emulates them inside the process. Where
 * a signal's action is the default and the default ends the process,
 * wasi-libc printed "Program recieved termination signal" and trapped, a
 * wasm_trap, where the native guest dies of the signal: an error
 * killed_by_signal:SIGTERM, exit status 143. abort() trapped too where the
 * native guest dies of SIGABRT (os.abort(), CPython's fatal errors).
 *
 * apysup_proc.exit_by_signal(sig) ends the guest as killed by sig
 * (internal/sandbox/wazero/signal.go); it never returns. Signals whose
 * default is to be ignored (SIGCHLD, SIGCONT, SIGURG, SIGWINCH) are left
 * to wasi-libc, as is every signal with a handler or SIG_IGN. SIGSTOP
 * stops the guest until the run ends, as natively: nothing in the sandbox
 * can continue it, and a stopped process runs no handler and no timer's
 * signal. SIGTSTP, SIGTTIN and SIGTTOU do nothing, as natively: the
 * kernel discards them for a process whose group is orphaned, as the
 * native guest's is (wasi-libc aborted for all four).
 *
 * The real-time interval timer (setitimer and getitimer's ITIMER_REAL,
 * alarm), which wasi-libc leaves out, is the host's
 * (internal/sandbox/wazero/itimer.go): apysup_proc.itimer arms it, and
 * when it is due the host sets _apysup_alarm_due and the words that make
 * CPython's eval loop check for signals (the interpreter's eval_breaker
 * and signals_pending, whose addresses signalmodule.c gives:
 * wasi-alarm.patch). CPython's signal check then calls _apysup_raise_due,
 * which raises SIGALRM here as the kernel would deliver it: a handler
 * runs, SIG_IGN drops it, the default ends the guest. A time.sleep the
 * timer interrupts (_apysup_sleeping set) ends early with EINTR, as
 * natively, and CPython sleeps on after a handler that returns (PEP 475);
 * pause waits for it the same way. ITIMER_VIRTUAL and ITIMER_PROF count
 * the guest's CPU time on the host, and deliver SIGVTALRM and SIGPROF
 * the same way, between two bytecodes.
 */
#define _WASI_EMULATED_SIGNAL
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

__attribute__((import_module("apysup_proc"), import_name("exit_by_signal")))
void __apysup_exit_by_signal(int sig);

int __real_raise(int sig);

static _Noreturn void die_of(int sig)
{
	__apysup_exit_by_signal(sig);
	__builtin_trap(); /* not reached: the host ends the guest */
}

enum { IGNORE, STOP, END };

static int default_action(int sig)
{
	switch (sig) {
	case SIGCHLD:
	case SIGCONT:
	case SIGURG:
	case SIGWINCH:
		return IGNORE;
	case SIGSTOP:
	case SIGTSTP:
	case SIGTTIN:
	case SIGTTOU:
		return STOP;
	}
	return END;
}

/* stop: the guest stops for good. A sleep no timer wakes (it is not
 * marked as _apysup_sleep_wakeable's is), until the host ends the run:
 * its timeout, or its caller. */
static _Noreturn void stop(void)
{
	for (;;) {
		struct timespec hour = {3600, 0};
		nanosleep(&hour, NULL);
	}
}

int __wrap_raise(int sig)
{
	if (sig > 0 && sig < _NSIG && default_action(sig) != IGNORE) {
		/* The emulation has no sigaction: read the action by setting one
		 * and putting it back. SIGKILL's and SIGSTOP's cannot be set
		 * (SIG_ERR), and are the default. */
		void (*action)(int) = SIG_DFL;
		if (sig != SIGKILL && sig != SIGSTOP) {
			action = signal(sig, SIG_IGN);
			if (action != SIG_ERR)
				signal(sig, action);
		}
		if (sig == SIGSTOP) /* always its default */
			stop();
		if (action == SIG_DFL && default_action(sig) == STOP)
			return 0;
		if (action == SIG_DFL)
			die_of(sig);
	}
	return __real_raise(sig);
}

/* glibc's abort() raises SIGABRT, runs a handler if there is one, then
 * dies of SIGABRT whatever the handler did: a Python handler only sets a
 * flag, so the native guest always dies of it. */
_Noreturn void __wrap_abort(void)
{
	die_of(SIGABRT);
}

/* glibc's descriptions of the signals below SIGRTMIN (signal.strsignal):
 * musl's differ for SIGFPE ("Arithmetic exception") and SIGCHLD ("Child
 * process status"), and name 32 to 64 "RT32" to "RT64", where glibc keeps
 * 32 and 33 for its threads ("Unknown signal 32", which signal.strsignal
 * answers as None) and calls 34 to 64 "Real-time signal 0" to 30. */
static const char *const glibc_signals[32] = {
	[1] = "Hangup",
	[2] = "Interrupt",
	[3] = "Quit",
	[4] = "Illegal instruction",
	[5] = "Trace/breakpoint trap",
	[6] = "Aborted",
	[7] = "Bus error",
	[8] = "Floating point exception",
	[9] = "Killed",
	[10] = "User defined signal 1",
	[11] = "Segmentation fault",
	[12] = "User defined signal 2",
	[13] = "Broken pipe",
	[14] = "Alarm clock",
	[15] = "Terminated",
	[16] = "Stack fault",
	[17] = "Child exited",
	[18] = "Continued",
	[19] = "Stopped (signal)",
	[20] = "Stopped",
	[21] = "Stopped (tty input)",
	[22] = "Stopped (tty output)",
	[23] = "Urgent I/O condition",
	[24] = "CPU time limit exceeded",
	[25] = "File size limit exceeded",
	[26] = "Virtual timer expired",
	[27] = "Profiling timer expired",
	[28] = "Window changed",
	[29] = "I/O possible",
	[30] = "Power failure",
	[31] = "Bad system call",
};

char *__real_strsignal(int sig);

char *__wrap_strsignal(int sig)
{
	static char buf[sizeof "Real-time signal -2147483648"];
	if (sig > 0 && sig < 32)
		return (char *)glibc_signals[sig];
	if (sig == 32 || sig == 33) {
		snprintf(buf, sizeof buf, "Unknown signal %d", sig);
		return buf;
	}
	if (sig >= 34 && sig < _NSIG) {
		snprintf(buf, sizeof buf, "Real-time signal %d", sig - 34);
		return buf;
	}
	return __real_strsignal(sig);
}

__attribute__((import_module("apysup_proc"), import_name("itimer")))
int32_t __apysup_itimer(int32_t which, int32_t set, int64_t value_ns, int64_t interval_ns,
			int64_t *old, const uint32_t *words);

/* Set by the host when a timer is due, cleared when its signal is raised:
 * ITIMER_REAL's (which time.sleep looks at too), ITIMER_VIRTUAL's and
 * ITIMER_PROF's. */
static volatile int _apysup_alarm_due;
static volatile int cpu_timer_due[2];
static volatile int *const timer_due[3] = {&_apysup_alarm_due, &cpu_timer_due[0], &cpu_timer_due[1]};
static const int timer_signal[3] = {SIGALRM, SIGVTALRM, SIGPROF};
/* Set while time.sleep waits (wasi-alarm.patch): a due timer wakes it. */
static volatile int _apysup_sleeping;

void _apysup_signal_words(volatile int **pending, volatile int **breaker); /* signalmodule.c */

#define NS_PER_SEC 1000000000LL

static int timeval_ns(const struct timeval *tv, int64_t *ns)
{
	/* Linux refuses what its timeval_valid refuses. */
	if (tv->tv_sec < 0 || tv->tv_usec < 0 || tv->tv_usec >= 1000000) {
		errno = EINVAL;
		return -1;
	}
	if (tv->tv_sec > (INT64_MAX - 999999999) / NS_PER_SEC)
		*ns = INT64_MAX; /* never, in practice: as Linux's clamp */
	else
		*ns = (int64_t)tv->tv_sec * NS_PER_SEC + (int64_t)tv->tv_usec * 1000;
	return 0;
}

/* A timer's remaining time as Linux reports it: in microseconds, rounded
 * up, so that an armed timer never reads 0. */
static void ns_timeval(int64_t ns, struct timeval *tv)
{
	int64_t us = (ns + 999) / 1000;
	tv->tv_sec = (time_t)(us / 1000000);
	tv->tv_usec = (suseconds_t)(us % 1000000);
}

static int itimer(int which, const struct itimerval *set, struct itimerval *old)
{
	if (which != ITIMER_REAL && which != ITIMER_VIRTUAL && which != ITIMER_PROF) {
		errno = EINVAL;
		return -1;
	}
	int64_t value = 0, interval = 0;
	if (set && (timeval_ns(&set->it_value, &value) < 0 || timeval_ns(&set->it_interval, &interval) < 0))
		return -1;
	volatile int *pending, *breaker;
	_apysup_signal_words(&pending, &breaker);
	uint32_t words[4] = {
		(uint32_t)(uintptr_t)timer_due[which],
		(uint32_t)(uintptr_t)pending,
		(uint32_t)(uintptr_t)breaker,
		(uint32_t)(uintptr_t)&_apysup_sleeping,
	};
	int64_t was[2];
	if (__apysup_itimer(which, set != NULL, value, interval, was, words) != 0) {
		errno = EINVAL;
		return -1;
	}
	if (old) {
		ns_timeval(was[0], &old->it_value);
		ns_timeval(was[1], &old->it_interval);
	}
	return 0;
}

int setitimer(int which, const struct itimerval *restrict set, struct itimerval *restrict old)
{
	if (!set) {
		errno = EFAULT;
		return -1;
	}
	return itimer(which, set, old);
}

int getitimer(int which, struct itimerval *cur)
{
	return itimer(which, NULL, cur);
}

/* glibc's alarm: setitimer's, and the seconds that were left, rounded to
 * the nearest and never 0 for an armed timer (Linux's alarm_setitimer). */
unsigned alarm(unsigned seconds)
{
	struct itimerval set = {{0, 0}, {(time_t)seconds, 0}}, old = {{0, 0}, {0, 0}};
	itimer(ITIMER_REAL, &set, &old);
	unsigned left = (unsigned)old.it_value.tv_sec;
	if ((!left && old.it_value.tv_usec) || old.it_value.tv_usec >= 500000)
		left++;
	return left;
}

/* A wait the host's timer may wake (time.sleep, select, poll; patched in
 * by wasi-alarm.patch): _apysup_wait_begin marks it, so that a due timer
 * ends the host's sleep (itimer.go), and _apysup_wait_end unmarks it and
 * answers whether the timer came due meanwhile: the caller then ends the
 * wait with EINTR, as SIGALRM does natively, and CPython runs the
 * handler. A wait of no time is never marked, and never interrupted. */
void _apysup_wait_begin(int blocking)
{
	_apysup_sleeping = blocking;
}

int _apysup_wait_end(void)
{
	int marked = _apysup_sleeping;
	_apysup_sleeping = 0;
	return marked && _apysup_alarm_due;
}

/* _apysup_sleep_wakeable sleeps for *t, or until the guest's timer comes
 * due meanwhile: 1 when it did (pause below, and a timed wait on a lock,
 * wasi-lock-timeouts.patch). */
int _apysup_sleep_wakeable(const struct timespec *t)
{
	_apysup_wait_begin(1);
	nanosleep(t, NULL);
	return _apysup_wait_end();
}

/* pause: sleep until a signal is delivered. The only ones that can arrive
 * while the guest waits are its timer's: a sleep the timer wakes
 * (_apysup_sleeping), then EINTR, after which CPython runs the handler.
 * With no timer armed it waits for ever, as natively, until the run ends. */
int pause(void)
{
	for (;;) {
		if (_apysup_alarm_due) {
			errno = EINTR;
			return -1;
		}
		struct timespec hour = {3600, 0};
		(void)_apysup_sleep_wakeable(&hour);
	}
}

/* Where CPython checks for signals (wasi-alarm.patch): a due timer's
 * signal is raised now, as the kernel delivers it between two
 * instructions. */
void _apysup_raise_due(void)
{
	for (int i = 0; i < 3; i++) {
		if (*timer_due[i]) {
			*timer_due[i] = 0;
			raise(timer_signal[i]);
		}
	}
}

