/* libuuid's config.h for the WASI build (build.sh compiles util-linux's
 * libuuid sources by hand, with this header forced in): what wasi-libc and
 * the WASI build have. No sockets, so neither the uuidd daemon nor the
 * network interfaces a node could be read from: libuuid takes a random
 * node with the multicast bit set, as it does in the native sandbox, where
 * socket(AF_INET) is refused. No getrandom: it reads /dev/urandom. */
#define HAVE_UNISTD_H 1
#define HAVE_STDLIB_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_FILE_H 1
#define HAVE_JRAND48 1
#define HAVE_NANOSLEEP 1
/* Debian's, which the read-only root refuses on both backends: uuid1's
 * UUIDs are SafeUUID.unsafe. */
#define LIBUUID_CLOCK_FILE "/var/lib/libuuid/clock.txt"
#define PACKAGE "util-linux"
#define PACKAGE_STRING "util-linux 2.38.1"

#include <sys/types.h>

/* _apysup_paths.c's (wasi-libc has none). */
mode_t umask(mode_t);

/* _apysup_fcntl.c's, as the fcntl module's (wasi-libc declares flock but
 * has none); libuuid locks its clock file with it, which the read-only
 * root never lets it open. */
int _apysup_flock(int fd, int operation);
#define flock(fd, operation) _apysup_flock(fd, operation)

/* wasi-libc has no user ids: the native guest's (1000), as os.getuid()
 * answers (wasi-os-ids.patch). libuuid mixes getuid() into its seed;
 * c.h's drop_permissions, which calls the setters, is never used. */
static inline uid_t getuid(void) { return 1000; }
static inline gid_t getgid(void) { return 1000; }
static inline int setuid(uid_t uid) { (void)uid; return -1; }
static inline int setgid(gid_t gid) { (void)gid; return -1; }
