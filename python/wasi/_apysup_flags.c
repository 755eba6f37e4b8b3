/*
 * The numbers scripts pass to open, posix_fadvise and the clock functions
 * as the native guest has them: Linux's.
 *
 * wasi-libc numbers open's flags its own way (O_RDONLY is 0x04000000,
 * O_CREAT 0x1000), swaps POSIX_FADV_RANDOM and POSIX_FADV_SEQUENTIAL,
 * and makes a clockid_t a pointer (time.CLOCK_REALTIME printed an
 * address). The os and time modules exported those values, so a script
 * that wrote Linux's numbers itself (os.open(path, 0), os.open(path,
 * 0o101), time.clock_gettime(1)) failed with EINVAL or read another clock,
 * and one that printed a constant printed another number.
 *
 * The modules now export Linux's values, and the functions that take them
 * turn them into wasi-libc's (patches/python3.11/wasi-linux-flags.patch):
 * os.open, the flags io's FileIO hands a custom opener (the other way
 * round), os.posix_fadvise, and time's clock functions. Inside C nothing
 * changes, but for poll's event bits, which are Linux's in every caller
 * (include/poll.h) and turned into wasi-libc's here. The Linux values are
 * the kernel's ABI (x86-64), checked against the native guest's
 * interpreter by flags_test.go. select's exceptional set, which
 * wasi-libc refuses, is answered here as Linux answers it for the
 * guest's descriptors.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/select.h>
#include <time.h>
#include <unistd.h>
#include <wasi/api.h>

/* BEGIN LINUX VALUES: checked by flags_test.go against the native guest's os and time modules */
#define L_O_RDONLY 00
#define L_O_WRONLY 01
#define L_O_RDWR 02
#define L_O_ACCMODE 03
#define L_O_CREAT 0100
#define L_O_EXCL 0200
#define L_O_NOCTTY 0400
#define L_O_TRUNC 01000
#define L_O_APPEND 02000
#define L_O_NONBLOCK 04000
#define L_O_DSYNC 010000
#define L_O_ASYNC 020000
#define L_O_DIRECT 040000
#define L_O_LARGEFILE_BIT 0100000 /* the kernel's; glibc exports O_LARGEFILE as 0 on 64-bit */
#define L_O_DIRECTORY 0200000
#define L_O_NOFOLLOW 0400000
#define L_O_NOATIME 01000000
#define L_O_CLOEXEC 02000000
#define L_O_SYNC_BIT 04000000 /* __O_SYNC: O_SYNC is it with O_DSYNC */
#define L_O_PATH 010000000
#define L_O_TMPFILE_BIT 020000000 /* __O_TMPFILE: O_TMPFILE is it with O_DIRECTORY */

static const struct linux_name {
    const char *name;
    long value;
} open_names[] = {
    {"O_ACCMODE", L_O_ACCMODE},
    {"O_APPEND", L_O_APPEND},
    {"O_ASYNC", L_O_ASYNC},
    {"O_CLOEXEC", L_O_CLOEXEC},
    {"O_CREAT", L_O_CREAT},
    {"O_DIRECT", L_O_DIRECT},
    {"O_DIRECTORY", L_O_DIRECTORY},
    {"O_DSYNC", L_O_DSYNC},
    {"O_EXCL", L_O_EXCL},
    {"O_FSYNC", L_O_SYNC_BIT | L_O_DSYNC},
    {"O_LARGEFILE", 0},
    {"O_NDELAY", L_O_NONBLOCK},
    {"O_NOATIME", L_O_NOATIME},
    {"O_NOCTTY", L_O_NOCTTY},
    {"O_NOFOLLOW", L_O_NOFOLLOW},
    {"O_NONBLOCK", L_O_NONBLOCK},
    {"O_PATH", L_O_PATH},
    {"O_RDONLY", L_O_RDONLY},
    {"O_RDWR", L_O_RDWR},
    {"O_RSYNC", L_O_SYNC_BIT | L_O_DSYNC},
    {"O_SYNC", L_O_SYNC_BIT | L_O_DSYNC},
    {"O_TMPFILE", L_O_TMPFILE_BIT | L_O_DIRECTORY},
    {"O_TRUNC", L_O_TRUNC},
    {"O_WRONLY", L_O_WRONLY},
    {"POSIX_FADV_DONTNEED", 4},
    {"POSIX_FADV_NOREUSE", 5},
    {"POSIX_FADV_NORMAL", 0},
    {"POSIX_FADV_RANDOM", 1},
    {"POSIX_FADV_SEQUENTIAL", 2},
    {"POSIX_FADV_WILLNEED", 3},
};

/* The clocks the native time module names, by Linux's id: WASI's four,
   and three the host reads for the guest (_apysup_clockid). */
static const struct linux_name clock_names[] = {
    {"CLOCK_BOOTTIME", 7},
    {"CLOCK_MONOTONIC", 1},
    {"CLOCK_MONOTONIC_RAW", 4},
    {"CLOCK_PROCESS_CPUTIME_ID", 2},
    {"CLOCK_REALTIME", 0},
    {"CLOCK_TAI", 11},
    {"CLOCK_THREAD_CPUTIME_ID", 3},
};
/* END LINUX VALUES */

#define COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* The os module's O_ and POSIX_FADV_ names with Linux's values: entry i,
   0 past the last. */
int _apysup_open_flag_name(int i, const char **name, long *value) {
    if (i < 0 || i >= COUNT(open_names)) {
        return 0;
    }
    *name = open_names[i].name;
    *value = open_names[i].value;
    return 1;
}

/* The time module's CLOCK_ names with Linux's ids. */
int _apysup_clock_name(int i, const char **name, long *value) {
    if (i < 0 || i >= COUNT(clock_names)) {
        return 0;
    }
    *name = clock_names[i].name;
    *value = clock_names[i].value;
    return 1;
}

/* wasi-libc's open flags for Linux's, or -1 (EINVAL) for what WASI cannot
   do: O_PATH, O_TMPFILE, and an access mode of 3. Flags WASI has no use
   for are dropped, as they change nothing a single process in its view
   sees: O_NOCTTY, O_CLOEXEC, O_LARGEFILE, O_NOATIME, O_ASYNC (it acts
   through fcntl only), O_DIRECT. Unknown bits are ignored, as Linux's open
   ignores them. */
int _apysup_open_flags_from_linux(int flags) {
    int out;
    switch (flags & L_O_ACCMODE) {
    case L_O_RDONLY:
        out = O_RDONLY;
        break;
    case L_O_WRONLY:
        out = O_WRONLY;
        break;
    case L_O_RDWR:
        out = O_RDWR;
        break;
    default:
        return -1;
    }
    if (flags & (L_O_PATH | L_O_TMPFILE_BIT)) {
        return -1;
    }
    static const struct {
        int linux_flag, wasi_flag;
    } bits[] = {
        {L_O_CREAT, O_CREAT},       {L_O_EXCL, O_EXCL},         {L_O_TRUNC, O_TRUNC},
        {L_O_APPEND, O_APPEND},     {L_O_NONBLOCK, O_NONBLOCK}, {L_O_DIRECTORY, O_DIRECTORY},
        {L_O_NOFOLLOW, O_NOFOLLOW}, {L_O_DSYNC, O_DSYNC},       {L_O_SYNC_BIT, O_SYNC},
    };
    for (int i = 0; i < COUNT(bits); i++) {
        if (flags & bits[i].linux_flag) {
            out |= bits[i].wasi_flag;
        }
    }
    return out;
}

/* Linux's open flags for wasi-libc's: what io's FileIO hands a custom
   opener, which natively always carries O_CLOEXEC. */
int _apysup_open_flags_to_linux(int flags) {
    int out = L_O_CLOEXEC;
    switch (flags & O_ACCMODE) {
    case O_WRONLY:
        out |= L_O_WRONLY;
        break;
    case O_RDWR:
        out |= L_O_RDWR;
        break;
    default:
        out |= L_O_RDONLY;
    }
    static const struct {
        int wasi_flag, linux_flag;
    } bits[] = {
        {O_CREAT, L_O_CREAT},       {O_EXCL, L_O_EXCL},         {O_TRUNC, L_O_TRUNC},
        {O_APPEND, L_O_APPEND},     {O_NONBLOCK, L_O_NONBLOCK}, {O_DIRECTORY, L_O_DIRECTORY},
        {O_NOFOLLOW, L_O_NOFOLLOW}, {O_DSYNC, L_O_DSYNC},       {O_SYNC, L_O_SYNC_BIT | L_O_DSYNC},
    };
    for (int i = 0; i < COUNT(bits); i++) {
        if ((flags & bits[i].wasi_flag) == bits[i].wasi_flag) {
            out |= bits[i].linux_flag;
        }
    }
    return out;
}

/* wasi-libc's advice for Linux's, or -1 (EINVAL, as Linux answers an
   unknown advice). */
int _apysup_fadvise_from_linux(int advice) {
    switch (advice) {
    case 0:
        return POSIX_FADV_NORMAL;
    case 1:
        return POSIX_FADV_RANDOM;
    case 2:
        return POSIX_FADV_SEQUENTIAL;
    case 3:
        return POSIX_FADV_WILLNEED;
    case 4:
        return POSIX_FADV_DONTNEED;
    case 5:
        return POSIX_FADV_NOREUSE;
    default:
        return -1;
    }
}

/* wasi-libc's clockid_t points at one of these (its private
   common/clock.h): the id it hands clock_time_get and clock_res_get. */
struct __clockid {
    __wasi_clockid_t id;
};

/* Linux's clocks beyond WASI's four that a guest can read natively
   (time.clock_gettime(time.CLOCK_TAI), or the coarse clocks by number).
   Their ids are Linux's, past WASI's last: the host's clock_time_get and
   clock_res_get read them from its own kernel, which is the native
   guest's (internal/sandbox/wazero/wasiclock.go), and answer EINVAL as it
   does where it has none (the alarm clocks, without a wake-up RTC). */
static const struct __clockid linux_clocks[] = {
    {4}, /* CLOCK_MONOTONIC_RAW */
    {5}, /* CLOCK_REALTIME_COARSE */
    {6}, /* CLOCK_MONOTONIC_COARSE */
    {7}, /* CLOCK_BOOTTIME */
    {8}, /* CLOCK_REALTIME_ALARM */
    {9}, /* CLOCK_BOOTTIME_ALARM */
    {11}, /* CLOCK_TAI */
};

/* wasi-libc's clock for Linux's id; 0 (with errno EINVAL, as Linux
   answers an unknown clock) for a clock neither WASI nor the host has. */
int _apysup_clockid(long id, clockid_t *clock) {
    switch (id) {
    case 0:
        *clock = CLOCK_REALTIME;
        return 1;
    case 1:
        *clock = CLOCK_MONOTONIC;
        return 1;
    case 2:
        *clock = CLOCK_PROCESS_CPUTIME_ID;
        return 1;
    case 3:
        *clock = CLOCK_THREAD_CPUTIME_ID;
        return 1;
    }
    for (int i = 0; i < COUNT(linux_clocks); i++) {
        if (linux_clocks[i].id == (__wasi_clockid_t)id) {
            *clock = &linux_clocks[i];
            return 1;
        }
    }
    errno = EINVAL;
    return 0;
}

/* wasi-libc's event bits (its __header_poll.h, which include/poll.h
   replaces with Linux's). */
#define W_POLLRDNORM 0x1
#define W_POLLWRNORM 0x2
#define W_POLLERR 0x1000
#define W_POLLHUP 0x2000
#define W_POLLNVAL 0x4000

int __real_poll(struct pollfd *fds, nfds_t nfds, int timeout);
int _apysup_fd_writable(int fd); /* _apysup_fcntl.c: -1 when fd is not open */

/* poll with Linux's event bits (--wrap=poll): each entry's reading and
   writing bits become wasi-libc's one each, and its answer becomes the
   bits the caller asked for of the two (POLLIN or POLLRDNORM or both, as
   Linux answers), with POLLERR, POLLHUP and POLLNVAL.

   An entry that asks neither (events 0, or POLLPRI alone) wasi-libc
   refuses with ENOSYS for the whole call; Linux answers it POLLNVAL for a
   bad descriptor and nothing otherwise, and so it is answered here, the
   others polled without waiting when it is POLLNVAL. A poll left with
   nothing to ask sleeps for its timeout, for ever without one (pause:
   until the guest's timer interrupts it), as natively. More entries than
   RLIMIT_NOFILE allows descriptors is EINVAL, as Linux answers; under
   wasi-libc they took the stack (two subscriptions an entry). */
int __wrap_poll(struct pollfd *fds, nfds_t nfds, int timeout) {
    struct rlimit nofile;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur != RLIM_INFINITY && nfds > nofile.rlim_cur) {
        errno = EINVAL;
        return -1;
    }
    struct asked {
        int fd;
        short events;
        short invalid; /* asked nothing, of a bad descriptor */
    } *asked = NULL;
    if (nfds > 0 && (asked = malloc(nfds * sizeof *asked)) == NULL) {
        errno = ENOMEM;
        return -1;
    }
    int polled = 0, invalid = 0;
    for (nfds_t i = 0; i < nfds; i++) {
        short e = fds[i].events, w = 0;
        asked[i].fd = fds[i].fd;
        asked[i].events = e;
        asked[i].invalid = 0;
        if (e & (POLLIN | POLLRDNORM))
            w |= W_POLLRDNORM;
        if (e & (POLLOUT | POLLWRNORM))
            w |= W_POLLWRNORM;
        fds[i].events = w;
        fds[i].revents = 0;
        if (fds[i].fd < 0)
            continue;
        if (w == 0) {
            fds[i].fd = -1; /* wasi-libc skips it */
            if (_apysup_fd_writable(asked[i].fd) < 0) {
                asked[i].invalid = 1;
                invalid++;
            }
        } else {
            polled++;
        }
    }
    int ret = 0;
    if (polled > 0) {
        ret = __real_poll(fds, nfds, invalid ? 0 : timeout);
    } else if (invalid == 0) {
        if (timeout >= 0) {
            ret = __real_poll(NULL, 0, timeout);
        } else {
            ret = pause();
        }
    }
    int saved = errno, ready = 0;
    for (nfds_t i = 0; i < nfds; i++) {
        short r = fds[i].revents, out = 0;
        if (ret >= 0) {
            if (r & W_POLLRDNORM)
                out |= asked[i].events & (POLLIN | POLLRDNORM);
            if (r & W_POLLWRNORM)
                out |= asked[i].events & (POLLOUT | POLLWRNORM);
            if (r & W_POLLERR)
                out |= POLLERR;
            if (r & W_POLLHUP)
                out |= POLLHUP;
            if ((r & W_POLLNVAL) || asked[i].invalid)
                out |= POLLNVAL;
        }
        fds[i].fd = asked[i].fd;
        fds[i].events = asked[i].events;
        fds[i].revents = out;
        ready += out != 0;
    }
    free(asked);
    if (ret < 0) {
        errno = saved;
        return -1;
    }
    return ready;
}

int __real_select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout);

/* select with descriptors in its exceptional set (--wrap=select):
   wasi-libc's refuses them with ENOSYS for the whole call (poll_oneoff has
   no such event), so select.select([f], [], [f]), the form that watches a
   descriptor for errors too, failed under wazero alone. Linux reports an
   exceptional condition only for a socket's out-of-band data or a
   pseudo-terminal's packet mode, and the guest has neither: each
   descriptor there is checked (EBADF, as Linux answers), then the others
   are selected and the exceptional set comes back empty. Nothing left to
   select waits for the timeout, for ever without one, as natively. */
int __wrap_select(int nfds, fd_set *readfds, fd_set *writefds, fd_set *exceptfds, struct timeval *timeout) {
    if (exceptfds == NULL) {
        return __real_select(nfds, readfds, writefds, NULL, timeout);
    }
    for (int fd = 0; fd < nfds; fd++) {
        if (FD_ISSET(fd, exceptfds) && _apysup_fd_writable(fd) < 0) {
            errno = EBADF;
            return -1;
        }
    }
    FD_ZERO(exceptfds);
    int left = 0;
    for (int fd = 0; fd < nfds && !left; fd++) {
        left = (readfds != NULL && FD_ISSET(fd, readfds)) || (writefds != NULL && FD_ISSET(fd, writefds));
    }
    if (!left && timeout == NULL) {
        return pause();
    }
    return __real_select(nfds, readfds, writefds, NULL, timeout);
}
