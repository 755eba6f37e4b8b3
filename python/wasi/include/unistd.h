/*
 * unistd.h for the WASI build: wasi-libc's, and the sysconf names glibc
 * has and wasi-libc lacks, with glibc's numbers (wasi-libc's names have
 * glibc's numbers too: musl keeps them). posixmodule.c lists a name in
 * os.sysconf_names when its macro exists; _apysup_host.c answers them as
 * glibc does.
 */
#ifndef _APYSUP_UNISTD_H
#define _APYSUP_UNISTD_H

#include_next <unistd.h>

/* alarm and pause, which wasi-libc leaves out with signals:
 * python/wasi/_apysup_signal.c has them, on the host's real-time timer
 * (sys/time.h here). */
unsigned alarm(unsigned);
int pause(void);

/* The terminal functions wasi-libc leaves out: python/wasi/_apysup_termios.c
 * has them, answering as for the native guest, which has no terminal. */
char *ctermid(char *);
char *ttyname(int);
int ttyname_r(int, char *, size_t);
pid_t tcgetpgrp(int);
int tcsetpgrp(int, pid_t);

/* Should wasi-libc come to define one, the same number redefines it
 * without a warning. */
#define _SC_EQUIV_CLASS_MAX 41
#define _SC_CHARCLASS_NAME_MAX 45
#define _SC_PII 53
#define _SC_PII_XTI 54
#define _SC_PII_SOCKET 55
#define _SC_PII_INTERNET 56
#define _SC_PII_OSI 57
#define _SC_POLL 58
#define _SC_SELECT 59
#define _SC_PII_INTERNET_STREAM 61
#define _SC_PII_INTERNET_DGRAM 62
#define _SC_PII_OSI_COTS 63
#define _SC_PII_OSI_CLTS 64
#define _SC_PII_OSI_M 65
#define _SC_T_IOV_MAX 66
#define _SC_2_C_VERSION 96
#define _SC_CHAR_BIT 101
#define _SC_CHAR_MAX 102
#define _SC_CHAR_MIN 103
#define _SC_INT_MAX 104
#define _SC_INT_MIN 105
#define _SC_LONG_BIT 106
#define _SC_WORD_BIT 107
#define _SC_MB_LEN_MAX 108
#define _SC_SSIZE_MAX 110
#define _SC_SCHAR_MAX 111
#define _SC_SCHAR_MIN 112
#define _SC_SHRT_MAX 113
#define _SC_SHRT_MIN 114
#define _SC_UCHAR_MAX 115
#define _SC_UINT_MAX 116
#define _SC_ULONG_MAX 117
#define _SC_USHRT_MAX 118
#define _SC_NL_ARGMAX 119
#define _SC_NL_LANGMAX 120
#define _SC_NL_MSGMAX 121
#define _SC_NL_NMAX 122
#define _SC_NL_SETMAX 123
#define _SC_NL_TEXTMAX 124
#define _SC_MINSIGSTKSZ 249

#endif
