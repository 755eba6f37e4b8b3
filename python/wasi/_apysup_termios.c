// The termios module's functions under WASI (termios/termios.h declares
// them; wasi-libc has none), answered as for the native guest, whose
// standard streams and files are never terminals: each is the ioctl glibc
// makes, through the fcntl module's _apysup_ioctl (_apysup_fcntl.c), which
// answers as the native guest's seccomp filter and kernel do. So
// tcgetattr, and tcgetwinsize, which CPython's termios.c asks by ioctl
// (termios/termios.h makes that ioctl _apysup_ioctl), fail with ENOTTY,
// or EBADF for a descriptor that is not open; tcsendbreak, tcdrain, tcflush and tcflow
// with the filter's EPERM, whatever the descriptor; tcsetattr and
// tcsetwinsize never reach their ioctl, as CPython reads the attributes
// first. The speed functions work on the structure alone, as glibc's.
//
// Also the os module's terminal functions (include/unistd.h and
// include/pty.h declare them): ctermid names /dev/tty, as glibc's;
// ttyname fails as tcgetattr does (ENOTTY, EBADF); tcgetpgrp, tcsetpgrp and
// login_tty are ioctls the filter refuses (EPERM, whatever the descriptor);
// openpty finds no /dev/ptmx, as natively (ENOENT).
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <termios.h>
#include <unistd.h>

int tcgetattr(int fd, struct termios *t) {
	return _apysup_ioctl(fd, TCGETS, t);
}

int tcsetattr(int fd, int action, const struct termios *t) {
	if (action != TCSANOW && action != TCSADRAIN && action != TCSAFLUSH) {
		errno = EINVAL;
		return -1;
	}
	return _apysup_ioctl(fd, TCSETS + action, t);
}

int tcsendbreak(int fd, int duration) {
	(void)duration; // glibc sends the standard break whatever it is
	return _apysup_ioctl(fd, TCSBRK, 0);
}

int tcdrain(int fd) {
	return _apysup_ioctl(fd, TCSBRK, 1);
}

int tcflush(int fd, int queue) {
	return _apysup_ioctl(fd, TCFLSH, queue);
}

int tcflow(int fd, int action) {
	return _apysup_ioctl(fd, TCXONC, action);
}

speed_t cfgetospeed(const struct termios *t) {
	return t->c_cflag & (CBAUD | CBAUDEX);
}

speed_t cfgetispeed(const struct termios *t) {
	return t->c_cflag & (CBAUD | CBAUDEX);
}

static int valid_speed(speed_t speed) {
	return (speed & ~CBAUD) == 0; // glibc: B0 to B38400, B57600 to B4000000
}

int cfsetospeed(struct termios *t, speed_t speed) {
	if (!valid_speed(speed)) {
		errno = EINVAL;
		return -1;
	}
	t->c_ospeed = speed;
	t->c_cflag = (t->c_cflag & ~(CBAUD | CBAUDEX)) | speed;
	return 0;
}

int cfsetispeed(struct termios *t, speed_t speed) {
	if (!valid_speed(speed)) {
		errno = EINVAL;
		return -1;
	}
	t->c_ispeed = speed;
	if (speed == 0) {
		t->c_iflag |= 0x80000000u; // glibc's IBAUD0: the input speed follows the output's
	} else {
		t->c_iflag &= ~0x80000000u;
		t->c_cflag = (t->c_cflag & ~(CBAUD | CBAUDEX)) | speed;
	}
	return 0;
}

char *ctermid(char *s) {
	static char name[] = "/dev/tty";
	return s ? strcpy(s, name) : name;
}

int ttyname_r(int fd, char *buf, size_t len) {
	(void)buf, (void)len;
	struct termios t;
	return tcgetattr(fd, &t) < 0 ? errno : ENOTTY;
}

char *ttyname(int fd) {
	int e = ttyname_r(fd, NULL, 0);
	errno = e;
	return NULL;
}

pid_t tcgetpgrp(int fd) {
	pid_t pgrp;
	return _apysup_ioctl(fd, TIOCGPGRP, &pgrp) < 0 ? -1 : pgrp;
}

int tcsetpgrp(int fd, pid_t pgrp) {
	return _apysup_ioctl(fd, TIOCSPGRP, &pgrp);
}

int openpty(int *master, int *slave, char *name, const struct termios *t, const struct winsize *w) {
	(void)master, (void)slave, (void)name, (void)t, (void)w;
	int fd = open("/dev/ptmx", O_RDWR | O_NOCTTY);
	if (fd >= 0) {
		close(fd); // a guest's /dev has no such device: never here
		errno = ENOENT;
	}
	return -1;
}

int login_tty(int fd) {
	if (_apysup_ioctl(fd, TIOCSCTTY, 0) < 0) {
		return -1;
	}
	errno = ENOTSUP; // never here: the filter refuses TIOCSCTTY; WASI has no dup2
	return -1;
}
