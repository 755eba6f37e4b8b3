/*
 * termios.h for the WASI build's termios module (CPython's own termios.c,
 * a built-in of build.sh's Setup.local, the only file that includes this
 * header): wasi-libc has none. The types are glibc's on Linux, and every
 * name the native guest's termios module has is defined with the number it
 * has there (the 231 names below; generated once from the native module's
 * values, which are Linux's ABI). The functions are _apysup_termios.c's,
 * which answer as the native guest's seccomp filter and kernel do: no
 * terminal reaches a guest.
 */
#ifndef _APYSUP_TERMIOS_H
#define _APYSUP_TERMIOS_H

#include <sys/ioctl.h>

typedef unsigned char cc_t;
typedef unsigned int speed_t;
typedef unsigned int tcflag_t;

/* wasi-libc's sys/ioctl.h names struct winsize but does not define it. */
struct winsize {
	unsigned short ws_row;
	unsigned short ws_col;
	unsigned short ws_xpixel;
	unsigned short ws_ypixel;
};

#define NCCS 32
struct termios {
	tcflag_t c_iflag;
	tcflag_t c_oflag;
	tcflag_t c_cflag;
	tcflag_t c_lflag;
	cc_t c_line;
	cc_t c_cc[NCCS];
	speed_t c_ispeed;
	speed_t c_ospeed;
};

int tcgetattr(int, struct termios *);
int tcsetattr(int, int, const struct termios *);
int tcsendbreak(int, int);
int tcdrain(int);
int tcflush(int, int);
int tcflow(int, int);
speed_t cfgetispeed(const struct termios *);
speed_t cfgetospeed(const struct termios *);
int cfsetispeed(struct termios *, speed_t);
int cfsetospeed(struct termios *, speed_t);

/* termios.c asks the window size by ioctl: the fcntl module's, which
 * answers as the native guest's seccomp filter and kernel do
 * (_apysup_fcntl.c). */
int _apysup_ioctl(int, int, ...);
#define ioctl _apysup_ioctl

/* The native termios module's names, with Linux's numbers. wasi-libc's
 * sys/ioctl.h has some of them (FIONREAD, FIONBIO) with WASI's: undefined
 * first. */
#undef B0
#define B0 0
#undef B1000000
#define B1000000 4104
#undef B110
#define B110 3
#undef B115200
#define B115200 4098
#undef B1152000
#define B1152000 4105
#undef B1200
#define B1200 9
#undef B134
#define B134 4
#undef B150
#define B150 5
#undef B1500000
#define B1500000 4106
#undef B1800
#define B1800 10
#undef B19200
#define B19200 14
#undef B200
#define B200 6
#undef B2000000
#define B2000000 4107
#undef B230400
#define B230400 4099
#undef B2400
#define B2400 11
#undef B2500000
#define B2500000 4108
#undef B300
#define B300 7
#undef B3000000
#define B3000000 4109
#undef B3500000
#define B3500000 4110
#undef B38400
#define B38400 15
#undef B4000000
#define B4000000 4111
#undef B460800
#define B460800 4100
#undef B4800
#define B4800 12
#undef B50
#define B50 1
#undef B500000
#define B500000 4101
#undef B57600
#define B57600 4097
#undef B576000
#define B576000 4102
#undef B600
#define B600 8
#undef B75
#define B75 2
#undef B921600
#define B921600 4103
#undef B9600
#define B9600 13
#undef BRKINT
#define BRKINT 2
#undef BS0
#define BS0 0
#undef BS1
#define BS1 8192
#undef BSDLY
#define BSDLY 8192
#undef CBAUD
#define CBAUD 4111
#undef CBAUDEX
#define CBAUDEX 4096
#undef CDSUSP
#define CDSUSP 25
#undef CEOF
#define CEOF 4
#undef CEOL
#define CEOL 0
#undef CEOT
#define CEOT 4
#undef CERASE
#define CERASE 127
#undef CFLUSH
#define CFLUSH 15
#undef CIBAUD
#define CIBAUD 269418496
#undef CINTR
#define CINTR 3
#undef CKILL
#define CKILL 21
#undef CLNEXT
#define CLNEXT 22
#undef CLOCAL
#define CLOCAL 2048
#undef CQUIT
#define CQUIT 28
#undef CR0
#define CR0 0
#undef CR1
#define CR1 512
#undef CR2
#define CR2 1024
#undef CR3
#define CR3 1536
#undef CRDLY
#define CRDLY 1536
#undef CREAD
#define CREAD 128
#undef CRPRNT
#define CRPRNT 18
#undef CRTSCTS
#define CRTSCTS 2147483648
#undef CS5
#define CS5 0
#undef CS6
#define CS6 16
#undef CS7
#define CS7 32
#undef CS8
#define CS8 48
#undef CSIZE
#define CSIZE 48
#undef CSTART
#define CSTART 17
#undef CSTOP
#define CSTOP 19
#undef CSTOPB
#define CSTOPB 64
#undef CSUSP
#define CSUSP 26
#undef CWERASE
#define CWERASE 23
#undef ECHO
#define ECHO 8
#undef ECHOCTL
#define ECHOCTL 512
#undef ECHOE
#define ECHOE 16
#undef ECHOK
#define ECHOK 32
#undef ECHOKE
#define ECHOKE 2048
#undef ECHONL
#define ECHONL 64
#undef ECHOPRT
#define ECHOPRT 1024
#undef EXTA
#define EXTA 14
#undef EXTB
#define EXTB 15
#undef FF0
#define FF0 0
#undef FF1
#define FF1 32768
#undef FFDLY
#define FFDLY 32768
#undef FIOASYNC
#define FIOASYNC 21586
#undef FIOCLEX
#define FIOCLEX 21585
#undef FIONBIO
#define FIONBIO 21537
#undef FIONCLEX
#define FIONCLEX 21584
#undef FIONREAD
#define FIONREAD 21531
#undef FLUSHO
#define FLUSHO 4096
#undef HUPCL
#define HUPCL 1024
#undef ICANON
#define ICANON 2
#undef ICRNL
#define ICRNL 256
#undef IEXTEN
#define IEXTEN 32768
#undef IGNBRK
#define IGNBRK 1
#undef IGNCR
#define IGNCR 128
#undef IGNPAR
#define IGNPAR 4
#undef IMAXBEL
#define IMAXBEL 8192
#undef INLCR
#define INLCR 64
#undef INPCK
#define INPCK 16
#undef IOCSIZE_MASK
#define IOCSIZE_MASK 1073676288
#undef IOCSIZE_SHIFT
#define IOCSIZE_SHIFT 16
#undef ISIG
#define ISIG 1
#undef ISTRIP
#define ISTRIP 32
#undef IUCLC
#define IUCLC 512
#undef IXANY
#define IXANY 2048
#undef IXOFF
#define IXOFF 4096
#undef IXON
#define IXON 1024
#undef NCC
#define NCC 8
#undef NCCS
#define NCCS 32
#undef NL0
#define NL0 0
#undef NL1
#define NL1 256
#undef NLDLY
#define NLDLY 256
#undef NOFLSH
#define NOFLSH 128
#undef N_MOUSE
#define N_MOUSE 2
#undef N_PPP
#define N_PPP 3
#undef N_SLIP
#define N_SLIP 1
#undef N_STRIP
#define N_STRIP 4
#undef N_TTY
#define N_TTY 0
#undef OCRNL
#define OCRNL 8
#undef OFDEL
#define OFDEL 128
#undef OFILL
#define OFILL 64
#undef OLCUC
#define OLCUC 2
#undef ONLCR
#define ONLCR 4
#undef ONLRET
#define ONLRET 32
#undef ONOCR
#define ONOCR 16
#undef OPOST
#define OPOST 1
#undef PARENB
#define PARENB 256
#undef PARMRK
#define PARMRK 8
#undef PARODD
#define PARODD 512
#undef PENDIN
#define PENDIN 16384
#undef TAB0
#define TAB0 0
#undef TAB1
#define TAB1 2048
#undef TAB2
#define TAB2 4096
#undef TAB3
#define TAB3 6144
#undef TABDLY
#define TABDLY 6144
#undef TCFLSH
#define TCFLSH 21515
#undef TCGETA
#define TCGETA 21509
#undef TCGETS
#define TCGETS 21505
#undef TCIFLUSH
#define TCIFLUSH 0
#undef TCIOFF
#define TCIOFF 2
#undef TCIOFLUSH
#define TCIOFLUSH 2
#undef TCION
#define TCION 3
#undef TCOFLUSH
#define TCOFLUSH 1
#undef TCOOFF
#define TCOOFF 0
#undef TCOON
#define TCOON 1
#undef TCSADRAIN
#define TCSADRAIN 1
#undef TCSAFLUSH
#define TCSAFLUSH 2
#undef TCSANOW
#define TCSANOW 0
#undef TCSBRK
#define TCSBRK 21513
#undef TCSBRKP
#define TCSBRKP 21541
#undef TCSETA
#define TCSETA 21510
#undef TCSETAF
#define TCSETAF 21512
#undef TCSETAW
#define TCSETAW 21511
#undef TCSETS
#define TCSETS 21506
#undef TCSETSF
#define TCSETSF 21508
#undef TCSETSW
#define TCSETSW 21507
#undef TCXONC
#define TCXONC 21514
#undef TIOCCONS
#define TIOCCONS 21533
#undef TIOCEXCL
#define TIOCEXCL 21516
#undef TIOCGETD
#define TIOCGETD 21540
#undef TIOCGICOUNT
#define TIOCGICOUNT 21597
#undef TIOCGLCKTRMIOS
#define TIOCGLCKTRMIOS 21590
#undef TIOCGPGRP
#define TIOCGPGRP 21519
#undef TIOCGSERIAL
#define TIOCGSERIAL 21534
#undef TIOCGSOFTCAR
#define TIOCGSOFTCAR 21529
#undef TIOCGWINSZ
#define TIOCGWINSZ 21523
#undef TIOCINQ
#define TIOCINQ 21531
#undef TIOCLINUX
#define TIOCLINUX 21532
#undef TIOCMBIC
#define TIOCMBIC 21527
#undef TIOCMBIS
#define TIOCMBIS 21526
#undef TIOCMGET
#define TIOCMGET 21525
#undef TIOCMIWAIT
#define TIOCMIWAIT 21596
#undef TIOCMSET
#define TIOCMSET 21528
#undef TIOCM_CAR
#define TIOCM_CAR 64
#undef TIOCM_CD
#define TIOCM_CD 64
#undef TIOCM_CTS
#define TIOCM_CTS 32
#undef TIOCM_DSR
#define TIOCM_DSR 256
#undef TIOCM_DTR
#define TIOCM_DTR 2
#undef TIOCM_LE
#define TIOCM_LE 1
#undef TIOCM_RI
#define TIOCM_RI 128
#undef TIOCM_RNG
#define TIOCM_RNG 128
#undef TIOCM_RTS
#define TIOCM_RTS 4
#undef TIOCM_SR
#define TIOCM_SR 16
#undef TIOCM_ST
#define TIOCM_ST 8
#undef TIOCNOTTY
#define TIOCNOTTY 21538
#undef TIOCNXCL
#define TIOCNXCL 21517
#undef TIOCOUTQ
#define TIOCOUTQ 21521
#undef TIOCPKT
#define TIOCPKT 21536
#undef TIOCPKT_DATA
#define TIOCPKT_DATA 0
#undef TIOCPKT_DOSTOP
#define TIOCPKT_DOSTOP 32
#undef TIOCPKT_FLUSHREAD
#define TIOCPKT_FLUSHREAD 1
#undef TIOCPKT_FLUSHWRITE
#define TIOCPKT_FLUSHWRITE 2
#undef TIOCPKT_NOSTOP
#define TIOCPKT_NOSTOP 16
#undef TIOCPKT_START
#define TIOCPKT_START 8
#undef TIOCPKT_STOP
#define TIOCPKT_STOP 4
#undef TIOCSCTTY
#define TIOCSCTTY 21518
#undef TIOCSERCONFIG
#define TIOCSERCONFIG 21587
#undef TIOCSERGETLSR
#define TIOCSERGETLSR 21593
#undef TIOCSERGETMULTI
#define TIOCSERGETMULTI 21594
#undef TIOCSERGSTRUCT
#define TIOCSERGSTRUCT 21592
#undef TIOCSERGWILD
#define TIOCSERGWILD 21588
#undef TIOCSERSETMULTI
#define TIOCSERSETMULTI 21595
#undef TIOCSERSWILD
#define TIOCSERSWILD 21589
#undef TIOCSER_TEMT
#define TIOCSER_TEMT 1
#undef TIOCSETD
#define TIOCSETD 21539
#undef TIOCSLCKTRMIOS
#define TIOCSLCKTRMIOS 21591
#undef TIOCSPGRP
#define TIOCSPGRP 21520
#undef TIOCSSERIAL
#define TIOCSSERIAL 21535
#undef TIOCSSOFTCAR
#define TIOCSSOFTCAR 21530
#undef TIOCSTI
#define TIOCSTI 21522
#undef TIOCSWINSZ
#define TIOCSWINSZ 21524
#undef TOSTOP
#define TOSTOP 256
#undef VDISCARD
#define VDISCARD 13
#undef VEOF
#define VEOF 4
#undef VEOL
#define VEOL 11
#undef VEOL2
#define VEOL2 16
#undef VERASE
#define VERASE 2
#undef VINTR
#define VINTR 0
#undef VKILL
#define VKILL 3
#undef VLNEXT
#define VLNEXT 15
#undef VMIN
#define VMIN 6
#undef VQUIT
#define VQUIT 1
#undef VREPRINT
#define VREPRINT 12
#undef VSTART
#define VSTART 8
#undef VSTOP
#define VSTOP 9
#undef VSUSP
#define VSUSP 10
#undef VSWTC
#define VSWTC 7
#undef VSWTCH
#define VSWTCH 7
#undef VT0
#define VT0 0
#undef VT1
#define VT1 16384
#undef VTDLY
#define VTDLY 16384
#undef VTIME
#define VTIME 5
#undef VWERASE
#define VWERASE 14
#undef XCASE
#define XCASE 4
#undef XTABS
#define XTABS 6144

#endif
