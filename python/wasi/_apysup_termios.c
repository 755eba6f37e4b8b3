// The termios module's functions under WASI (termios/termios.h declares
// them; wasi-libc has none), answered as for the native guest, whose
// standard streams and files are never terminals: each is the ioctl glibc
// makes, through the fcntl module's _apysup_ioctl (_apysup_fcntl.c), which
// answers as the native guest's seccomp filter and kernel do. So
// tcgetattr, and tcgetwinsize, which CPython's termios.c asks by ioctl
// (termios/termios.h makes that ioctl _apysup_ioctl), fail with ENOTTY, or EBADF for a
// descriptor that is not open; tcsendbreak, tcdrain, tcflush and tcflow
// with the filter's EPERM, whatever the descriptor; tcsetattr and
// tcsetwinsize never reach their ioctl, as CPython reads the attributes
// first. The speed functions work on the structure alone, as glibc's.
#include <errno.h>
#include <termios.h>

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
