/*
 * netdb.h for the WASI build, which wasi-libc lacks: the resolver's
 * interface as glibc declares it, with glibc's numbers, answered by
 * _apysup_netdb.c as the confined native guest's glibc answers (its files
 * alone: no network). It also gives the socket module Linux's numbers for
 * the address families, socket types, message flags and the rest of the
 * socket constants WASI numbers its own way, as the native guest's socket
 * module has them: socketmodule.c includes this header after
 * <sys/socket.h>, and no socket of the guest's ever reaches wasi-libc's
 * socket functions (socket() refuses every family, as the native guest's
 * seccomp filter refuses the network's).
 */
#ifndef _APYSUP_NETDB_H
#define _APYSUP_NETDB_H

#include <sys/socket.h>
#include <netinet/in.h>

#undef AF_UNSPEC
#undef AF_UNIX
#undef AF_INET
#undef AF_INET6
#undef PF_UNSPEC
#undef PF_UNIX
#undef PF_INET
#undef PF_INET6
/* AF_UNIX and PF_UNIX stay undefined: WASI has no Unix-domain socket
 * (socketmodule.h drops them too without sys/un.h). */
#define AF_UNSPEC 0
#define AF_INET 2
#define AF_INET6 10
#define PF_UNSPEC AF_UNSPEC
#define PF_INET AF_INET
#define PF_INET6 AF_INET6

#undef SOCK_STREAM
#undef SOCK_DGRAM
#undef SOCK_RAW
#undef SOCK_RDM
#undef SOCK_SEQPACKET
#undef SOCK_NONBLOCK
#undef SOCK_CLOEXEC
#define SOCK_STREAM 1
#define SOCK_DGRAM 2
#define SOCK_RAW 3
#define SOCK_RDM 4
#define SOCK_SEQPACKET 5
#define SOCK_NONBLOCK 04000
#define SOCK_CLOEXEC 02000000

#undef SOL_SOCKET
#undef SO_TYPE
#undef SOMAXCONN
#define SOL_SOCKET 1
#define SO_TYPE 3
#define SOMAXCONN 4096

#undef MSG_OOB
#undef MSG_PEEK
#undef MSG_DONTROUTE
#undef MSG_CTRUNC
#undef MSG_TRUNC
#undef MSG_DONTWAIT
#undef MSG_EOR
#undef MSG_WAITALL
#undef MSG_CONFIRM
#undef MSG_ERRQUEUE
#undef MSG_NOSIGNAL
#undef MSG_MORE
#undef MSG_FASTOPEN
#undef MSG_CMSG_CLOEXEC
#define MSG_OOB 0x0001
#define MSG_PEEK 0x0002
#define MSG_DONTROUTE 0x0004
#define MSG_CTRUNC 0x0008
#define MSG_TRUNC 0x0020
#define MSG_DONTWAIT 0x0040
#define MSG_EOR 0x0080
#define MSG_WAITALL 0x0100
#define MSG_CONFIRM 0x0800
#define MSG_ERRQUEUE 0x2000
#define MSG_NOSIGNAL 0x4000
#define MSG_MORE 0x8000
#define MSG_FASTOPEN 0x20000000
#define MSG_CMSG_CLOEXEC 0x40000000

#undef SHUT_RD
#undef SHUT_WR
#undef SHUT_RDWR
#define SHUT_RD 0
#define SHUT_WR 1
#define SHUT_RDWR 2

struct hostent {
	char *h_name;
	char **h_aliases;
	int h_addrtype;
	int h_length;
	char **h_addr_list;
};
#define h_addr h_addr_list[0]

struct servent {
	char *s_name;
	char **s_aliases;
	int s_port;
	char *s_proto;
};

struct protoent {
	char *p_name;
	char **p_aliases;
	int p_proto;
};

struct addrinfo {
	int ai_flags;
	int ai_family;
	int ai_socktype;
	int ai_protocol;
	socklen_t ai_addrlen;
	struct sockaddr *ai_addr;
	char *ai_canonname;
	struct addrinfo *ai_next;
};

#define AI_PASSIVE 0x0001
#define AI_CANONNAME 0x0002
#define AI_NUMERICHOST 0x0004
#define AI_V4MAPPED 0x0008
#define AI_ALL 0x0010
#define AI_ADDRCONFIG 0x0020
#define AI_NUMERICSERV 0x0400

#define NI_MAXHOST 1025
#define NI_MAXSERV 32
#define NI_NUMERICHOST 1
#define NI_NUMERICSERV 2
#define NI_NOFQDN 4
#define NI_NAMEREQD 8
#define NI_DGRAM 16

#define EAI_BADFLAGS -1
#define EAI_NONAME -2
#define EAI_AGAIN -3
#define EAI_FAIL -4
#define EAI_NODATA -5
#define EAI_FAMILY -6
#define EAI_SOCKTYPE -7
#define EAI_SERVICE -8
#define EAI_ADDRFAMILY -9
#define EAI_MEMORY -10
#define EAI_SYSTEM -11
#define EAI_OVERFLOW -12

#define HOST_NOT_FOUND 1
#define TRY_AGAIN 2
#define NO_RECOVERY 3
#define NO_DATA 4
#define NO_ADDRESS NO_DATA

extern int h_errno;
const char *hstrerror(int);

int getaddrinfo(const char *__restrict, const char *__restrict,
		const struct addrinfo *__restrict, struct addrinfo **__restrict);
void freeaddrinfo(struct addrinfo *);
const char *gai_strerror(int);
int getnameinfo(const struct sockaddr *__restrict, socklen_t,
		char *__restrict, socklen_t, char *__restrict, socklen_t, int);
struct hostent *gethostbyname(const char *);
struct hostent *gethostbyaddr(const void *, socklen_t, int);
struct servent *getservbyname(const char *, const char *);
struct servent *getservbyport(int, const char *);
struct protoent *getprotobyname(const char *);

/* wasi-libc's <arpa/inet.h> leaves inet_ntoa out: _apysup_netdb.c has
 * glibc's. */
char *inet_ntoa(struct in_addr);

/* wasi-libc declares no socket(): _apysup_netdb.c has one that refuses. */
int socket(int, int, int);

#endif
