/*
 * File calls WASI preview 1 lacks, answered as the native guest's kernel
 * answers them: chown and its kin, sendfile, copy_file_range,
 * getrandom and getlogin. build.sh links this object into python.wasm and tells
 * configure they exist (patches/python3.11/wasi-files.patch and
 * wasi-devices-getrandom-copy.patch declare them to posixmodule.c).
 *
 * chown, lchown, fchown, fchownat. The native guest is uid and gid 1000,
 * in no other group, without capabilities, so chown(2) changes nothing
 * that it may change: a file it owns may be given its own uid and gid
 * (or -1), nothing else, and on the read-only root nothing at all. So no
 * host call is needed: the file is looked up as chown(2) looks it up
 * (stat, or lstat without following, and the kernel's errno for a path
 * that does not resolve), and stat's view of its owner and device
 * (_apysup_stat.c, from internal/sandbox/wazero/nativeview.go) decides:
 *
 *  - on the read-only root (device ROOT_DEV: the stdlib, the guest's
 *    files, the job, /usr/share/zoneinfo, the directories that lead to
 *    the mounts): EROFS, whatever the ids, as the kernel refuses a write
 *    to a read-only mount before it looks at the owner;
 *  - an id the guest's user namespace does not map (every id but 0 and
 *    1000, and -1 for "unchanged") is EINVAL;
 *  - a uid other than -1 is allowed when the guest owns the file and the
 *    uid is its own; a gid other than -1 when the guest owns the file and
 *    the gid is its own; anything else is EPERM. chown(f, -1, -1) of a
 *    file the guest does not own (/tmp itself, /dev/null) succeeds.
 *
 * The host file is never touched: what chown(2) would change natively
 * (the owner, and setuid and setgid bits the guest's files cannot have
 * under wazero) is already what the view shows. Its change time stays.
 *
 * sendfile copies from a file to a descriptor, as Linux's sendfile(2)
 * does for a regular file, by reading and writing: with an offset it
 * reads from there and leaves the input's own offset alone, without one
 * it reads from the input's offset and advances it; it stops at the end
 * of the input, at a short write, or after count bytes (at most
 * 0x7ffff000), and returns what it copied, or -1 with errno when nothing
 * was: EBADF for a descriptor that is not open (or not for reading, or
 * writing), EINVAL for a negative offset, a file opened O_APPEND as the
 * output or a directory as the input, as the kernel checks them.
 *
 * copy_file_range copies between two regular files the same way, with
 * Linux's checks in the kernel's order (vfs_copy_file_range): EBADF for
 * a descriptor that is not open, EINVAL for flags; EISDIR for a
 * directory, EINVAL for anything else not a regular file; EBADF for an
 * output opened O_APPEND; EXDEV between two filesystems (the native
 * guest's mounts are distinct tmpfs and its read-only root, which stat's
 * view tells apart by st_dev; tmpfs copies only within itself); EOVERFLOW
 * for a range that wraps (a negative offset); the count cut at the
 * input's end; EINVAL for overlapping ranges of one file, then for a
 * negative offset; 0 for nothing to copy. A descriptor opened without
 * read (input) or write (output) access fails at the read or the write,
 * EBADF, since WASI does not say how a descriptor was opened.
 *
 * getrandom fills a buffer from WASI's random_get (the host's
 * crypto/rand) after getrandom(2)'s checks: EINVAL for an unknown flag,
 * or GRND_INSECURE with GRND_RANDOM. The kernel's pool is ready long
 * before a guest runs, so it never blocks nor answers EAGAIN, natively
 * either.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>
#include <wasi/api.h>

/* nativeview.go's rootDev, as _apysup_stat.c hands it on in st_dev. */
#define ROOT_DEV 1
/* The native guest's uid and gid (_apysup_stat.c's owner class 1). */
#define GUEST_ID 1000

/* The ids the native guest's user namespace maps: root and the guest. */
static int mapped(unsigned id)
{
	return id == (unsigned)-1 || id == 0 || id == GUEST_ID;
}

static int may_chown(const struct stat *st, uid_t uid, gid_t gid)
{
	if (st->st_dev == ROOT_DEV) {
		errno = EROFS;
		return -1;
	}
	if (!mapped(uid) || !mapped(gid)) {
		errno = EINVAL;
		return -1;
	}
	int owned = st->st_uid == GUEST_ID;
	if ((uid != (uid_t)-1 && !(owned && uid == GUEST_ID)) || (gid != (gid_t)-1 && !(owned && gid == GUEST_ID))) {
		errno = EPERM;
		return -1;
	}
	return 0;
}

int fchownat(int dirfd, const char *path, uid_t uid, gid_t gid, int flag)
{
	if ((flag & ~AT_SYMLINK_NOFOLLOW) != 0) {
		errno = EINVAL;
		return -1;
	}
	struct stat st;
	if (fstatat(dirfd, path, &st, flag) != 0)
		return -1;
	return may_chown(&st, uid, gid);
}

int chown(const char *path, uid_t uid, gid_t gid)
{
	return fchownat(AT_FDCWD, path, uid, gid, 0);
}

int lchown(const char *path, uid_t uid, gid_t gid)
{
	return fchownat(AT_FDCWD, path, uid, gid, AT_SYMLINK_NOFOLLOW);
}

int fchown(int fd, uid_t uid, gid_t gid)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -1;
	return may_chown(&st, uid, gid);
}

#define MAX_RW_COUNT 0x7ffff000 /* Linux's bound on one read or write */

static char copy_buf[65536];

/* copy_through copies up to count bytes from in_fd, read at pos_in, to
 * out_fd, written at pos_out or, when pos_out is -1, at its own offset. It
 * stops at the input's end or at a short write, and returns what it
 * copied, or -1 with errno when a read or a write failed before anything
 * was copied. */
static ssize_t copy_through(int in_fd, off_t pos_in, int out_fd, off_t pos_out, size_t count)
{
	size_t done = 0;
	int err = 0;
	while (done < count) {
		size_t want = count - done < sizeof copy_buf ? count - done : sizeof copy_buf;
		ssize_t got = pread(in_fd, copy_buf, want, pos_in + (off_t)done);
		if (got <= 0) {
			err = got < 0 ? errno : 0;
			break;
		}
		ssize_t put = pos_out == -1 ? write(out_fd, copy_buf, (size_t)got)
		                            : pwrite(out_fd, copy_buf, (size_t)got, pos_out + (off_t)done);
		if (put < 0) {
			err = errno;
			break;
		}
		done += (size_t)put;
		if (put < got)
			break;
	}
	if (done == 0 && err != 0) {
		errno = err;
		return -1;
	}
	return (ssize_t)done;
}

ssize_t sendfile(int out_fd, int in_fd, off_t *offset, size_t count)
{
	struct stat in_st, out_st;
	if (fstat(in_fd, &in_st) != 0)
		return -1;
	if (offset != NULL && *offset < 0) {
		errno = EINVAL;
		return -1;
	}
	if (fstat(out_fd, &out_st) != 0)
		return -1;
	int out_flags = fcntl(out_fd, F_GETFL);
	if (out_flags == -1)
		return -1;
	/* Linux refuses O_APPEND where it splices into a file; into a pipe
	 * (the guest's standard streams natively) it does not look. */
	if (((out_flags & O_APPEND) != 0 && S_ISREG(out_st.st_mode)) || S_ISDIR(in_st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;
	off_t pos;
	if (offset != NULL) {
		pos = *offset;
	} else if ((pos = lseek(in_fd, 0, SEEK_CUR)) == -1) {
		return -1;
	}
	ssize_t done = copy_through(in_fd, pos, out_fd, -1, count);
	if (done < 0)
		return -1;
	if (offset != NULL)
		*offset = pos + (off_t)done;
	else if (lseek(in_fd, pos + (off_t)done, SEEK_SET) == -1)
		return -1;
	return done;
}

ssize_t copy_file_range(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len, unsigned flags)
{
	struct stat in_st, out_st;
	if (fstat(fd_in, &in_st) != 0 || fstat(fd_out, &out_st) != 0)
		return -1;
	if (flags != 0) {
		errno = EINVAL;
		return -1;
	}
	if (S_ISDIR(in_st.st_mode) || S_ISDIR(out_st.st_mode)) {
		errno = EISDIR;
		return -1;
	}
	if (!S_ISREG(in_st.st_mode) || !S_ISREG(out_st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	int out_flags = fcntl(fd_out, F_GETFL);
	if (out_flags == -1)
		return -1;
	if ((out_flags & O_APPEND) != 0) {
		errno = EBADF;
		return -1;
	}
	if (in_st.st_dev != out_st.st_dev) {
		errno = EXDEV;
		return -1;
	}
	off_t pos_in, pos_out;
	if (off_in != NULL)
		pos_in = *off_in;
	else if ((pos_in = lseek(fd_in, 0, SEEK_CUR)) == -1)
		return -1;
	if (off_out != NULL)
		pos_out = *off_out;
	else if ((pos_out = lseek(fd_out, 0, SEEK_CUR)) == -1)
		return -1;
	/* The kernel's arithmetic: offsets and count as unsigned 64 bits. */
	uint64_t count = len, in = (uint64_t)pos_in, out = (uint64_t)pos_out;
	if (in + count < in || out + count < out) {
		errno = EOVERFLOW;
		return -1;
	}
	if (pos_in >= in_st.st_size)
		count = 0;
	else if (count > (uint64_t)in_st.st_size - in)
		count = (uint64_t)in_st.st_size - in;
	if (in_st.st_ino == out_st.st_ino && out + count > in && out < in + count) {
		errno = EINVAL;
		return -1;
	}
	if (pos_in < 0 || pos_out < 0) {
		errno = EINVAL;
		return -1;
	}
	if (count == 0)
		return 0;
	if (count > MAX_RW_COUNT)
		count = MAX_RW_COUNT;
	ssize_t done = copy_through(fd_in, pos_in, fd_out, pos_out, (size_t)count);
	if (done <= 0)
		return done;
	if (off_in != NULL)
		*off_in = pos_in + (off_t)done;
	else if (lseek(fd_in, pos_in + (off_t)done, SEEK_SET) == -1)
		return -1;
	if (off_out != NULL)
		*off_out = pos_out + (off_t)done;
	else if (lseek(fd_out, pos_out + (off_t)done, SEEK_SET) == -1)
		return -1;
	return done;
}

#define GRND_NONBLOCK 0x0001
#define GRND_RANDOM 0x0002
#define GRND_INSECURE 0x0004

ssize_t getrandom(void *buf, size_t len, unsigned flags)
{
	if ((flags & ~(unsigned)(GRND_NONBLOCK | GRND_RANDOM | GRND_INSECURE)) != 0 ||
	    (flags & (GRND_INSECURE | GRND_RANDOM)) == (GRND_INSECURE | GRND_RANDOM)) {
		errno = EINVAL;
		return -1;
	}
	if (len > MAX_RW_COUNT)
		len = MAX_RW_COUNT;
	__wasi_errno_t e = __wasi_random_get((uint8_t *)buf, (__wasi_size_t)len);
	if (e != 0) {
		errno = e;
		return -1;
	}
	return (ssize_t)len;
}

/*
 * getlogin as the native guest's glibc answers it: the sandbox has no
 * controlling terminal and no utmp, so there is no login name (NULL,
 * ENXIO: os.getlogin raises "[Errno 6] No such device or address").
 * wasi-libc declares getlogin and has none, so os.getlogin did not exist
 * and the common idiom `try: os.getlogin() except OSError: ...` ended in
 * an AttributeError under wazero.
 */
char *getlogin(void)
{
	errno = ENXIO;
	return NULL;
}

/*
 * statvfs and fstatvfs as the native guest's kernel answers them, for the
 * mount the file is on: the file is looked up as statvfs(2) looks it up
 * (stat, following links, with the kernel's errno for a path that does
 * not resolve), and stat's view names the mount by its device
 * (_apysup_stat.c: the read-only root, the out directory, the workspace,
 * /tmp, /dev, or one of /dev's nodes). The host answers for that mount
 * (internal/sandbox/wazero/statvfs.go): the writable mounts as tmpfs of
 * the run's limits, the root and /dev's nodes as the host's filesystems
 * under the native sandbox's flags, /dev as its own small tmpfs. A
 * descriptor without a mount of the view (a pipe, the guest's stdio) is
 * ENOSYS.
 */
#include <sys/statvfs.h>

__attribute__((import_module("apysup_fs"), import_name("statvfs")))
int32_t apysup_fs_statvfs(uint32_t dev, uint64_t *out);

static int statvfs_of(const struct stat *st, struct statvfs *buf)
{
	uint64_t v[11];
	int32_t e = apysup_fs_statvfs((uint32_t)st->st_dev, v);
	if (e != 0) {
		errno = e;
		return -1;
	}
	buf->f_bsize = v[0];
	buf->f_frsize = v[1];
	buf->f_blocks = v[2];
	buf->f_bfree = v[3];
	buf->f_bavail = v[4];
	buf->f_files = v[5];
	buf->f_ffree = v[6];
	buf->f_favail = v[7];
	buf->f_fsid = v[8];
	buf->f_flag = v[9];
	buf->f_namemax = v[10];
	return 0;
}

int statvfs(const char *restrict path, struct statvfs *restrict buf)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	return statvfs_of(&st, buf);
}

/* _apysup_read_only is 1 when the directory dir lies on a read-only mount
 * (_apysup_paths.c: link's EROFS comes before its EXDEV). */
int _apysup_read_only(const char *dir)
{
	struct statvfs buf;
	return statvfs(dir, &buf) == 0 && (buf.f_flag & ST_RDONLY) != 0;
}

int fstatvfs(int fd, struct statvfs *buf)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return -1;
	return statvfs_of(&st, buf);
}
