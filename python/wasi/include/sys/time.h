/*
 * sys/time.h for the WASI build: wasi-libc's, and the interval timers it
 * leaves out (WASI has no signals), with glibc's numbers and layout. The
 * WASI build's setitimer, getitimer and alarm (python/wasi/_apysup_signal.c)
 * ask the host for a real-time timer that delivers SIGALRM to the guest
 * (internal/sandbox/wazero/itimer.go).
 */
#ifndef _APYSUP_SYS_TIME_H
#define _APYSUP_SYS_TIME_H

#include_next <sys/time.h>

#define ITIMER_REAL 0
#define ITIMER_VIRTUAL 1
#define ITIMER_PROF 2

struct itimerval {
	struct timeval it_interval;
	struct timeval it_value;
};

int getitimer(int, struct itimerval *);
int setitimer(int, const struct itimerval *__restrict, struct itimerval *__restrict);

#endif
