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
 * to wasi-libc, as is every signal with a handler or SIG_IGN. A stop
 * signal's default (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU) does nothing: a
 * process alone cannot be continued, and wasi-libc aborted.
 */
#define _WASI_EMULATED_SIGNAL
#include <signal.h>
#include <stdio.h>
#include <string.h>

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
