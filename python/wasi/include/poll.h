/*
 * poll.h for the WASI build: wasi-libc's struct pollfd and poll(), with
 * Linux's event bits, which the native guest's select.poll takes and
 * answers (its POLL constants, and the bits a script wrote itself).
 * poll() is _apysup_flags.c's (--wrap=poll in build.sh): it turns them
 * into wasi-libc's and back. The values are the kernel's ABI, checked
 * against the native guest's select module by flags_test.go.
 */
#ifndef _APYSUP_POLL_H
#define _APYSUP_POLL_H

#include_next <poll.h>

#undef POLLIN
#undef POLLOUT
#undef POLLRDNORM
#undef POLLWRNORM
#undef POLLERR
#undef POLLHUP
#undef POLLNVAL

#define POLLIN 0x001
#define POLLPRI 0x002
#define POLLOUT 0x004
#define POLLERR 0x008
#define POLLHUP 0x010
#define POLLNVAL 0x020
#define POLLRDNORM 0x040
#define POLLRDBAND 0x080
#define POLLWRNORM 0x100
#define POLLWRBAND 0x200
#define POLLMSG 0x400
#define POLLRDHUP 0x2000

#endif
