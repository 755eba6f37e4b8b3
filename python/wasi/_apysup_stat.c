/*
 * stat answers as the native guest's kernel does: permission bits, owner
 * and device. build.sh links this object with
 * -Wl,--wrap=fstat,--wrap=__wasilibc_nocwd_fstatat (stat, lstat and
 * fstatat all end in the second).
 *
 * WASI preview 1's filestat has no permission bits and no owner, so
 * wasi-libc's st_mode held the file type alone and st_uid 0. The host
 * (internal/sandbox/wazero/nativeview.go) puts what the native guest
 * would see, per mount, in the filestat's device field: VIEW_MAGIC in its
 * top 16 bits, the mount's device number in the next 16, an owner class
 * in the next, a device's minor number in the next 4 (the devices of /dev
 * are all major 1) and the permission bits (setuid, setgid and sticky
 * included) in the low 12. A device field without the magic is one of the
 * standard streams, which wazero serves itself: as_native_stream.
 *
 * WASI's filestat has no block size and no block count either, and
 * wasi-libc left both 0: open() then buffered a file with Python's 8 KiB
 * default where the native guest's 4 KiB st_blksize gives 4 KiB (a
 * binary file's unflushed writes reached the file at other points), and
 * st_blocks, from which scripts reckon disk usage, was 0. Every
 * filesystem the native guest sees (tmpfs for its writable mounts and
 * /dev, the host's for the rest, ext4 on Debian) answers a block size of
 * 4096, and the blocks are reckoned as those filesystems allocate them: a
 * regular file's size in whole pages, a directory nothing on tmpfs and
 * one block on the read-only root, a link or a device nothing. A sparse
 * file is reckoned as if written whole (the host's own count does not
 * cross WASI).
 *
 * Seeks answer as on the native guest's files too (-Wl,--wrap=__wasi_fd_seek,
 * under lseek, fseek and every tell): wazero's empty stdin answers ENOSYS
 * where natively stdin is /dev/null, whose seeks land at 0; its stdout and
 * stderr answer EIO, and a file that cannot seek (/dev/stdout reopened:
 * internal/sandbox/wazero/devfs.go) ENOSYS, where natively a pipe's seek
 * is ESPIPE, which CPython's FileIO ignores when it opens a file to append
 * to (wazero's errno set has no ESPIPE to answer itself); a directory's
 * seek, EISDIR under wazero, moves its reading position
 * (_apysup_fcntl.c's _apysup_dir_seek).
 */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>
#include <wasi/api.h>

int __real_fstat(int fd, struct stat *st);
int __real___wasilibc_nocwd_fstatat(int fd, const char *restrict path, struct stat *restrict st, int flag);

#define VIEW_MAGIC 0xa9b5u
#define ROOT_DEV 1 /* nativeview.go's rootDev: the read-only root */
#define BLOCK_SIZE 4096
#define MEM_MAJOR 1
/* Linux's number for a FIFO: wasi-libc's S_IFIFO is its S_IFSOCK, 0140000
 * (WASI has no FIFO), which a script reading st_mode's bits would see;
 * the stat module tests Linux's numbers (wasi-stat-types.patch). */
#define LINUX_S_IFIFO 0010000

static void as_native(struct stat *st)
{
	st->st_blksize = BLOCK_SIZE;
	uint64_t dev = st->st_dev;
	if ((dev >> 48) != VIEW_MAGIC)
		return;
	unsigned owner = (dev >> 16) & 0xffff;
	unsigned id = owner == 1 ? 1000 : owner == 2 ? 65534 : 0; /* the guest, nobody, root */
	unsigned minor = (dev >> 12) & 0xf;
	/* A viewed file with no WASI type is a pipe: /dev/stdout and
	 * /dev/stderr (devfs.go), which WASI has no type for. */
	mode_t type = st->st_mode & S_IFMT;
	st->st_mode = (type != 0 ? type : LINUX_S_IFIFO) | (mode_t)(dev & 07777);
	st->st_uid = id;
	st->st_gid = id;
	st->st_dev = (dev >> 32) & 0xffff;
	st->st_rdev = 0;
	st->st_blocks = 0;
	if (S_ISREG(st->st_mode) && st->st_size > 0)
		st->st_blocks = (st->st_size + BLOCK_SIZE - 1) / BLOCK_SIZE * (BLOCK_SIZE / 512);
	else if (S_ISDIR(st->st_mode) && st->st_dev == ROOT_DEV)
		st->st_blocks = BLOCK_SIZE / 512;
	else if (S_ISCHR(st->st_mode) && minor != 0)
		st->st_rdev = (MEM_MAJOR << 8) | minor; /* glibc's makedev(1, minor) */
}

/*
 * The standard streams wazero serves itself carry no view: the empty
 * stdin answers a block device and the output pipes no file type at all
 * (WASI has none for a pipe). Natively stdin is /dev/null, nobody's
 * (65534: the host's root is outside the guest's user namespace), and
 * stdout and stderr are the supervisor's pipes, which it gives the guest's
 * user (1000) as a program's own pipes are its user's.
 */
static void as_native_stream(int fd, struct stat *st)
{
	unsigned id;
	if (fd == 0 && S_ISBLK(st->st_mode)) {
		st->st_mode = S_IFCHR | 0666;
		st->st_rdev = (MEM_MAJOR << 8) | 3; /* /dev/null */
		id = 65534;
	} else if ((fd == 1 || fd == 2) && ((st->st_mode & S_IFMT) == 0 || S_ISBLK(st->st_mode))) {
		st->st_mode = LINUX_S_IFIFO | 0600;
		id = 1000;
	} else {
		return;
	}
	st->st_uid = id;
	st->st_gid = id;
	st->st_nlink = 1;
	st->st_size = 0;
	st->st_blocks = 0;
}

int __wrap_fstat(int fd, struct stat *st)
{
	int r = __real_fstat(fd, st);
	if (r == 0) {
		if ((st->st_dev >> 48) != VIEW_MAGIC)
			as_native_stream(fd, st);
		as_native(st);
	}
	return r;
}

int __wrap___wasilibc_nocwd_fstatat(int fd, const char *restrict path, struct stat *restrict st, int flag)
{
	int r = __real___wasilibc_nocwd_fstatat(fd, path, st, flag);
	if (r == 0)
		as_native(st);
	return r;
}

/*
 * wasi-libc's isatty() is true of every character device that cannot
 * seek, which WASI makes of every character device: a file the script
 * opened on /dev/null was a terminal (line-buffered, and code that colours
 * its output or draws progress bars asks so). The guest's devices are all
 * the kernel's memory devices (as fstat answers above), none a terminal:
 * ENOTTY, as natively.
 */
int __real_isatty(int fd);

int __wrap_isatty(int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && (st.st_rdev >> 8) == MEM_MAJOR) {
		errno = ENOTTY;
		return 0;
	}
	return __real_isatty(fd);
}

__wasi_errno_t __real___wasi_fd_seek(__wasi_fd_t fd, __wasi_filedelta_t offset, __wasi_whence_t whence, __wasi_filesize_t *pos);
__wasi_errno_t _apysup_dir_seek(int fd, __wasi_filedelta_t offset, __wasi_whence_t whence, __wasi_filesize_t *pos);

__wasi_errno_t __wrap___wasi_fd_seek(__wasi_fd_t fd, __wasi_filedelta_t offset, __wasi_whence_t whence, __wasi_filesize_t *pos)
{
	__wasi_errno_t err = __real___wasi_fd_seek(fd, offset, whence, pos);
	if (err == __WASI_ERRNO_ISDIR) /* a directory: lseek is its reading position */
		return _apysup_dir_seek(fd, offset, whence, pos);
	if (err != __WASI_ERRNO_NOSYS && err != __WASI_ERRNO_IO)
		return err;
	__wasi_fdstat_t st;
	if (__wasi_fd_fdstat_get(fd, &st) != 0)
		return err;
	if (st.fs_filetype == __WASI_FILETYPE_BLOCK_DEVICE) { /* the empty stdin: /dev/null natively */
		*pos = 0;
		return 0;
	}
	return __WASI_ERRNO_SPIPE;
}
