// fcntl, flock and ioctl for the fcntl module under WASI
// (_apysup_fcntlmodule.c), answered as for the native guest: Linux's
// commands, flags and errnos, in a sandbox of one process whose seccomp
// filter allows a few ioctl requests (internal/seccomp/policy.go).
//
// WASI has one process and no dup, so an open file description is a
// descriptor, and every lock a guest can conflict with is its own:
//   - POSIX record locks (F_SETLK, F_SETLKW, lockf) belong to the process
//     and never conflict with one another: they are checked as Linux
//     checks them and always granted; F_GETLK always finds none.
//   - flock locks belong to the open file: two descriptors of one file
//     conflict, as natively. The table below holds them until LOCK_UN or
//     close. A blocking request that conflicts waits as natively, for
//     ever: no other thread can release it.
// The descriptor flag FD_CLOEXEC is kept here too, for every caller of
// fcntl (--wrap=fcntl: os.get_inheritable and os.set_inheritable use it):
// WASI has no exec, and wasi-libc answers F_GETFD with a constant.

#define _WASI_EMULATED_GETPID // getpid is _apysup_host.c's
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <wasi/api.h>

int _apysup_open_flags_from_linux(int flags);
int _apysup_open_flags_to_linux(int flags);

int __real_fcntl(int fd, int cmd, ...);
int __real_close(int fd);

// Linux's numbers (asm-generic/fcntl.h, linux/fcntl.h, sys/file.h,
// asm-generic/ioctls.h).
enum {
    L_F_DUPFD = 0, L_F_GETFD = 1, L_F_SETFD = 2, L_F_GETFL = 3, L_F_SETFL = 4,
    L_F_GETLK = 5, L_F_SETLK = 6, L_F_SETLKW = 7, L_F_SETOWN = 8, L_F_GETOWN = 9,
    L_F_SETSIG = 10, L_F_GETSIG = 11, L_F_OFD_GETLK = 36, L_F_OFD_SETLK = 37,
    L_F_OFD_SETLKW = 38, L_F_GETLEASE = 1025, L_F_NOTIFY = 1026,
    L_F_DUPFD_CLOEXEC = 1030, L_F_SETPIPE_SZ = 1031, L_F_GETPIPE_SZ = 1032,
    L_F_RDLCK = 0, L_F_WRLCK = 1, L_F_UNLCK = 2,
    L_LOCK_SH = 1, L_LOCK_EX = 2, L_LOCK_NB = 4, L_LOCK_UN = 8, L_LOCK_MAND = 32,
    L_O_ACCMODE = 03, L_O_APPEND = 02000, L_O_NONBLOCK = 04000, L_O_CLOEXEC = 02000000,
    L_O_LARGEFILE = 0100000,
};
#define L_TCGETS 0x5401u
#define L_TIOCGWINSZ 0x5413u
#define L_FIONBIO 0x5421u
#define L_FIONCLEX 0x5450u
#define L_FIOCLEX 0x5451u
#define L_FICLONE 0x40049409u
#define L_PIPE_SIZE 65536 // a pipe's default capacity
#define L_SIGMAX 64

// The one argument a variadic fcntl or ioctl takes after `last`: an int or
// a pointer, both 32 bits in wasm32 (absent, it reads as garbage, unused).
#define ARG_AFTER(last)                         \
    ({                                          \
        va_list ap_;                            \
        va_start(ap_, last);                    \
        intptr_t arg_ = va_arg(ap_, intptr_t);  \
        va_end(ap_);                            \
        arg_;                                   \
    })

// Descriptor state beyond WASI's: FD_CLOEXEC (Python opens every file
// with it, PEP 446; the standard streams are inherited without it) and
// F_SETSIG's signal. Reset when the descriptor is closed.
#define FD_STATES 4096
// Also the access mode a file was opened with (wazero grants every
// descriptor every right), for what the open wrapper (_apysup_paths.c)
// saw open.
static struct {
    unsigned char set; // cloexec below was set by F_SETFD
    unsigned char cloexec;
    unsigned char sig;
    unsigned char opened; // accmode below is known
    int accmode;          // wasi-libc's O_RDONLY, O_WRONLY or O_RDWR
    long long dir_pos;    // a directory's offset (_apysup_dir_seek)
} fd_state[FD_STATES];

static int opened(int fd)
{
    return fd >= 0 && fd < FD_STATES && fd_state[fd].opened;
}

// The standard streams the guest started with, until it closes or reopens
// one: natively stdin is /dev/null, opened for reading and writing, and
// stdout and stderr the write ends of pipes; wazero reports its own
// (stdout and stderr read-write and appending).
static unsigned char stdio_replaced[3];

static int is_stdio(int fd)
{
    return fd >= 0 && fd < 3 && !stdio_replaced[fd];
}

// _apysup_stdin_is_null reports whether descriptor 0 is still the stdin
// the guest started with, which stands for the native guest's /dev/null
// (_apysup_errno.c's writes).
int _apysup_stdin_is_null(void)
{
    return is_stdio(0);
}

// _apysup_fd_opened records what open(2) was asked for a new descriptor
// (wasi-libc's flags). wazero drops O_NONBLOCK at the open of a file and
// keeps it when it is set afterwards, as os.set_blocking does.
void _apysup_fd_opened(int fd, int oflag)
{
    if (fd >= 0 && fd < 3) {
        stdio_replaced[fd] = 1;
    }
    if (fd >= 0 && fd < FD_STATES) {
        memset(&fd_state[fd], 0, sizeof fd_state[fd]);
        fd_state[fd].opened = 1;
        fd_state[fd].accmode = oflag & O_ACCMODE;
    }
    if (oflag & O_NONBLOCK) {
        int flags = __real_fcntl(fd, F_GETFL);
        if (flags >= 0 && (flags & O_NONBLOCK) == 0) {
            (void)__real_fcntl(fd, F_SETFL, flags | O_NONBLOCK);
        }
    }
}

static int cloexec_of(int fd)
{
    if (fd >= 0 && fd < FD_STATES && fd_state[fd].set) {
        return fd_state[fd].cloexec;
    }
    return fd > 2;
}

static void set_cloexec(int fd, int on)
{
    if (fd >= 0 && fd < FD_STATES) {
        fd_state[fd].set = 1;
        fd_state[fd].cloexec = on != 0;
    }
}

// The flock table: one entry per descriptor holding a lock.
#define FLOCKS 256
static struct {
    int used, fd, exclusive;
    dev_t dev;
    ino_t ino;
} flocks[FLOCKS];

// unlock drops the flock lock fd holds, if any.
static void unlock(int fd)
{
    for (int i = 0; i < FLOCKS; i++) {
        if (flocks[i].used && flocks[i].fd == fd) {
            flocks[i].used = 0;
        }
    }
}

static void forget(int fd)
{
    if (fd >= 0 && fd < 3) {
        stdio_replaced[fd] = 1;
    }
    if (fd >= 0 && fd < FD_STATES) {
        memset(&fd_state[fd], 0, sizeof fd_state[fd]);
    }
    unlock(fd);
}

// The mounts' directories, wazero's preopens, hold the descriptors from 3
// up (3 to 13) from the start, and wasi-libc resolves every path through
// them; the native guest has nothing open there. A close of one answers
// EBADF, as natively, and keeps the mount: code that tidies the
// descriptors it inherited (os.closerange(3, n), a daemon's loop of
// os.close) cut the guest off from its files before. wasi-libc finds the
// preopens the same way, from 3 until the first that is none; they never
// change.
static int preopen_end; // one past the last preopen; 0 until looked up

static int is_preopen(int fd)
{
    if (preopen_end == 0) {
        __wasi_prestat_t p;
        int end = 3;
        while (__wasi_fd_prestat_get(end, &p) == __WASI_ERRNO_SUCCESS) {
            end++;
        }
        preopen_end = end;
    }
    return fd >= 3 && fd < preopen_end;
}

int __wrap_close(int fd)
{
    if (is_preopen(fd)) {
        errno = EBADF;
        return -1;
    }
    int r = __real_close(fd);
    if (r == 0) {
        forget(fd);
    }
    return r;
}

// The descriptor's WASI type and access, or -1 with errno EBADF.
static int describe(int fd, __wasi_fdstat_t *st)
{
    __wasi_errno_t e = __wasi_fd_fdstat_get(fd, st);
    if (e != 0) {
        errno = e;
        return -1;
    }
    return 0;
}

static int readable(int fd, const __wasi_fdstat_t *st)
{
    if (opened(fd)) {
        return fd_state[fd].accmode == O_RDONLY || fd_state[fd].accmode == O_RDWR;
    }
    return (st->fs_rights_base & __WASI_RIGHTS_FD_READ) != 0;
}

static int writable(int fd, const __wasi_fdstat_t *st)
{
    if (opened(fd)) {
        return fd_state[fd].accmode == O_WRONLY || fd_state[fd].accmode == O_RDWR;
    }
    return (st->fs_rights_base & __WASI_RIGHTS_FD_WRITE) != 0;
}

// _apysup_fd_writable answers 1 when fd is open for writing, 0 when it is
// open but not for writing, and -1 when it is not open.
int _apysup_fd_writable(int fd)
{
    __wasi_fdstat_t st;
    if (describe(fd, &st) != 0) {
        return -1;
    }
    return writable(fd, &st);
}

// _apysup_dir_seek is lseek on a directory's descriptor, which wazero
// refuses (EISDIR), as the native guest's tmpfs answers it: the offset is
// the directory's reading position, which SEEK_SET and SEEK_CUR move
// anywhere from 0, and SEEK_END is EINVAL (ext4, under the read-only
// mounts, answers SEEK_END with its hash's end instead). WASI reads a
// directory by cookie, so the offset moves nothing here; it is kept so
// that SEEK_CUR answers it. Answers a WASI errno.
__wasi_errno_t _apysup_dir_seek(int fd, __wasi_filedelta_t offset, __wasi_whence_t whence, __wasi_filesize_t *pos)
{
    long long base = 0, to;
    if (whence == __WASI_WHENCE_CUR) {
        base = fd >= 0 && fd < FD_STATES ? fd_state[fd].dir_pos : 0;
    } else if (whence != __WASI_WHENCE_SET) {
        return __WASI_ERRNO_INVAL;
    }
    if (__builtin_add_overflow(base, offset, &to) || to < 0) {
        return __WASI_ERRNO_INVAL;
    }
    if (fd >= 0 && fd < FD_STATES) {
        fd_state[fd].dir_pos = to;
    }
    *pos = (__wasi_filesize_t)to;
    return __WASI_ERRNO_SUCCESS;
}

// fcntl for every caller: FD_CLOEXEC here, F_GETFL with the access mode
// kept above, the rest wasi-libc's.
int __wrap_fcntl(int fd, int cmd, ...)
{
    intptr_t arg = ARG_AFTER(cmd);
    __wasi_fdstat_t st;
    switch (cmd) {
    case F_GETFD:
        if (describe(fd, &st) < 0) {
            return -1;
        }
        return cloexec_of(fd) ? FD_CLOEXEC : 0;
    case F_SETFD:
        if (describe(fd, &st) < 0) {
            return -1;
        }
        set_cloexec(fd, arg & FD_CLOEXEC);
        return 0;
    case F_GETFL: {
        int flags = __real_fcntl(fd, F_GETFL);
        if (flags >= 0 && opened(fd)) {
            flags = (flags & ~O_ACCMODE) | fd_state[fd].accmode;
        } else if (flags >= 0 && is_stdio(fd)) {
            flags = (flags & ~(O_ACCMODE | O_APPEND)) | (fd == 0 ? O_RDWR : O_WRONLY);
        }
        return flags;
    }
    }
    return __real_fcntl(fd, cmd, arg);
}

// A record lock's range, checked as Linux checks it (fs/locks.c,
// flock64_to_posix_lock): EINVAL for a bad whence, or a start or end
// before 0 or past off_t.
static int check_range(int fd, const struct flock *l)
{
    off_t base;
    switch (l->l_whence) {
    case SEEK_SET:
        base = 0;
        break;
    case SEEK_CUR:
        base = lseek(fd, 0, SEEK_CUR);
        break;
    case SEEK_END: {
        struct stat s;
        if (fstat(fd, &s) < 0) {
            return -1;
        }
        base = s.st_size;
        break;
    }
    default:
        errno = EINVAL;
        return -1;
    }
    if (base < 0) {
        return -1;
    }
    int64_t start;
    if (__builtin_add_overflow((int64_t)base, (int64_t)l->l_start, &start) || start < 0) {
        errno = EINVAL;
        return -1;
    }
    if (l->l_len < 0 && start + l->l_len < 0) {
        errno = EINVAL;
        return -1;
    }
    int64_t end;
    if (l->l_len > 0 && __builtin_add_overflow(start, (int64_t)l->l_len - 1, &end)) {
        errno = EOVERFLOW;
        return -1;
    }
    return 0;
}

static int record_lock(int fd, int cmd, struct flock *l, const __wasi_fdstat_t *st)
{
    int ofd = cmd == L_F_OFD_GETLK || cmd == L_F_OFD_SETLK || cmd == L_F_OFD_SETLKW;
    int get = cmd == L_F_GETLK || cmd == L_F_OFD_GETLK;
    if (ofd && l->l_pid != 0) {
        errno = EINVAL;
        return -1;
    }
    switch (l->l_type) {
    case L_F_RDLCK:
    case L_F_WRLCK:
        break;
    case L_F_UNLCK:
        if (get) {
            errno = EINVAL;
            return -1;
        }
        break;
    default:
        errno = EINVAL;
        return -1;
    }
    if (check_range(fd, l) < 0) {
        return -1;
    }
    if (get) {
        l->l_type = L_F_UNLCK; // nothing else in the guest holds a lock
        return 0;
    }
    if ((l->l_type == L_F_RDLCK && !readable(fd, st)) || (l->l_type == L_F_WRLCK && !writable(fd, st))) {
        errno = EBADF;
        return -1;
    }
    return 0;
}

// Linux's S_IFIFO, which stat answers for the output pipes
// (_apysup_stat.c).
static int is_fifo(int fd)
{
    struct stat s;
    return fstat(fd, &s) == 0 && (s.st_mode & 0170000) == 0010000;
}

// The fcntl module's fcntl: Linux's commands and open flags.
int _apysup_fcntl(int fd, int cmd, ...)
{
    intptr_t arg = ARG_AFTER(cmd);
    __wasi_fdstat_t st;
    if (describe(fd, &st) < 0) {
        return -1;
    }
    switch (cmd) {
    case L_F_GETFD:
    case L_F_SETFD:
        return __wrap_fcntl(fd, cmd, arg);
    case L_F_GETFL: {
        int flags = __wrap_fcntl(fd, F_GETFL);
        if (flags < 0) {
            return -1;
        }
        flags = _apysup_open_flags_to_linux(flags) & ~L_O_CLOEXEC;
        // A 64-bit process's open always adds O_LARGEFILE; the sandbox's
        // pipes come from elsewhere.
        // The native guest's stdin, /dev/null, was opened by its init.
        if (st.fs_filetype == __WASI_FILETYPE_REGULAR_FILE || st.fs_filetype == __WASI_FILETYPE_DIRECTORY ||
            (fd == 0 && is_stdio(fd))) {
            flags |= L_O_LARGEFILE;
        }
        return flags;
    }
    case L_F_SETFL: {
        // Linux changes only these of the flags a script can see.
        int flags = __wrap_fcntl(fd, F_GETFL);
        if (flags < 0) {
            return -1;
        }
        flags &= ~(O_APPEND | O_NONBLOCK);
        flags |= _apysup_open_flags_from_linux((int)arg & (L_O_APPEND | L_O_NONBLOCK)) & (O_APPEND | O_NONBLOCK);
        return __wrap_fcntl(fd, F_SETFL, flags);
    }
    case L_F_GETLK:
    case L_F_SETLK:
    case L_F_SETLKW:
    case L_F_OFD_GETLK:
    case L_F_OFD_SETLK:
    case L_F_OFD_SETLKW:
        return record_lock(fd, cmd, (struct flock *)arg, &st);
    case L_F_GETOWN:
        return 0;
    case L_F_SETOWN:
        if (arg != 0 && arg != getpid()) {
            errno = ESRCH;
            return -1;
        }
        return 0;
    case L_F_GETSIG:
        return fd < FD_STATES ? fd_state[fd].sig : 0;
    case L_F_SETSIG:
        if (arg < 0 || arg > L_SIGMAX) {
            errno = EINVAL;
            return -1;
        }
        if (fd < FD_STATES) {
            fd_state[fd].sig = (unsigned char)arg;
        }
        return 0;
    case L_F_GETLEASE:
        return L_F_UNLCK;
    case L_F_NOTIFY:
        // dnotify: no event ever comes to a guest that cannot take a signal
        // from another process; a non-directory is refused for any event.
        if (arg != 0 && st.fs_filetype != __WASI_FILETYPE_DIRECTORY) {
            errno = ENOTDIR;
            return -1;
        }
        return 0;
    case L_F_GETPIPE_SZ:
        if (!is_fifo(fd)) {
            errno = EBADF;
            return -1;
        }
        return L_PIPE_SIZE;
    case L_F_DUPFD:
    case L_F_DUPFD_CLOEXEC:
        errno = ENOTSUP; // as os.dup: WASI has no dup
        return -1;
    }
    // F_SETLEASE, F_SETPIPE_SZ and the seals, which act on other
    // processes or other file systems, and commands Linux has not.
    errno = EINVAL;
    return -1;
}

// os.lockf, as glibc's (io/lockf64.c) on the record locks above: a write
// lock from the current offset over len bytes (to the end for 0), F_TEST
// finding none held, since nothing else in the guest can hold one.
// wasi-libc has none.
int lockf(int fd, int cmd, off_t len)
{
    struct flock l = {.l_type = L_F_WRLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = len};
    switch (cmd) {
    case F_TEST:
        l.l_type = L_F_RDLCK;
        if (_apysup_fcntl(fd, L_F_GETLK, &l) < 0) {
            return -1;
        }
        if (l.l_type == L_F_UNLCK) {
            return 0;
        }
        errno = EACCES;
        return -1;
    case F_ULOCK:
        l.l_type = L_F_UNLCK;
        return _apysup_fcntl(fd, L_F_SETLK, &l);
    case F_LOCK:
        return _apysup_fcntl(fd, L_F_SETLKW, &l);
    case F_TLOCK:
        return _apysup_fcntl(fd, L_F_SETLK, &l);
    }
    errno = EINVAL;
    return -1;
}

// The fcntl module's flock: locks of open files, as Linux's.
int _apysup_flock(int fd, int operation)
{
    struct stat s;
    if (fstat(fd, &s) < 0) {
        return -1;
    }
    if (operation & L_LOCK_MAND) {
        return 0; // Linux ignores these since 5.15
    }
    int exclusive;
    switch (operation & ~L_LOCK_NB) {
    case L_LOCK_SH:
        exclusive = 0;
        break;
    case L_LOCK_EX:
        exclusive = 1;
        break;
    case L_LOCK_UN:
        unlock(fd);
        return 0;
    default:
        errno = EINVAL;
        return -1;
    }
    int mine = -1, free_slot = -1, conflict = 0;
    for (int i = 0; i < FLOCKS; i++) {
        if (!flocks[i].used) {
            if (free_slot < 0) {
                free_slot = i;
            }
        } else if (flocks[i].fd == fd) {
            mine = i;
        } else if (flocks[i].dev == s.st_dev && flocks[i].ino == s.st_ino && (exclusive || flocks[i].exclusive)) {
            conflict = 1;
        }
    }
    if (conflict && (operation & L_LOCK_NB)) {
        errno = EWOULDBLOCK;
        return -1;
    }
    // Nothing but this thread could release the lock: natively it waits
    // until the run ends, and so does this.
    while (conflict) {
        sleep(3600);
    }
    int slot = mine >= 0 ? mine : free_slot;
    if (slot < 0) {
        errno = ENOLCK;
        return -1;
    }
    flocks[slot].used = 1;
    flocks[slot].fd = fd;
    flocks[slot].exclusive = exclusive;
    flocks[slot].dev = s.st_dev;
    flocks[slot].ino = s.st_ino;
    return 0;
}

// The fcntl module's ioctl: the requests the native guest's seccomp filter
// allows answer as there; any other is that filter's EPERM, whatever the
// descriptor.
int _apysup_ioctl(int fd, int request, ...)
{
    intptr_t arg = ARG_AFTER(request);
    __wasi_fdstat_t st;
    switch ((unsigned)request) {
    case L_TCGETS:
    case L_TIOCGWINSZ:
        if (describe(fd, &st) < 0) {
            return -1;
        }
        errno = ENOTTY; // no terminal reaches a guest
        return -1;
    case L_FIONBIO: {
        if (describe(fd, &st) < 0) {
            return -1;
        }
        int flags = __wrap_fcntl(fd, F_GETFL);
        if (flags < 0) {
            return -1;
        }
        flags = *(const int *)arg ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
        return __wrap_fcntl(fd, F_SETFL, flags);
    }
    case L_FIOCLEX:
    case L_FIONCLEX:
        if (describe(fd, &st) < 0) {
            return -1;
        }
        set_cloexec(fd, (unsigned)request == L_FIOCLEX);
        return 0;
    case L_FICLONE: {
        __wasi_fdstat_t src;
        if (describe(fd, &st) < 0 || describe((int)arg, &src) < 0) {
            return -1;
        }
        errno = EOPNOTSUPP; // the guest's writable mounts clone nothing
        return -1;
    }
    }
    errno = EPERM;
    return -1;
}
