/*
 * pty.h for the WASI build, which wasi-libc lacks: openpty and login_tty,
 * which python/wasi/_apysup_termios.c answers as the native guest's glibc
 * does in a sandbox without terminals (no /dev/ptmx, and a seccomp filter
 * that refuses TIOCSCTTY). posixmodule.c includes it for os.openpty and
 * os.login_tty.
 */
#ifndef _APYSUP_PTY_H
#define _APYSUP_PTY_H

struct termios;
struct winsize;

int openpty(int *, int *, char *, const struct termios *, const struct winsize *);
int login_tty(int);

#endif
