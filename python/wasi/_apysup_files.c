/*
 * File calls WASI preview 1 lacks, answered as the native guest's kernel
 * answers them: chown and its kin, and sendfile. build.sh links this
 * object into python.wasm and tells configure they exist
 * (patches/python3.11/wasi-files.patch declares them to posixmodule.c).
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
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

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

#define SENDFILE_MAX 0x7ffff000 /* Linux's MAX_RW_COUNT */

static char sendfile_buf[65536];

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
	if (count > SENDFILE_MAX)
		count = SENDFILE_MAX;
	off_t pos;
	if (offset != NULL) {
		pos = *offset;
	} else if ((pos = lseek(in_fd, 0, SEEK_CUR)) == -1) {
		return -1;
	}
	size_t done = 0;
	int err = 0;
	while (done < count) {
		size_t want = count - done < sizeof sendfile_buf ? count - done : sizeof sendfile_buf;
		ssize_t got = pread(in_fd, sendfile_buf, want, pos + (off_t)done);
		if (got <= 0) {
			err = got < 0 ? errno : 0;
			break;
		}
		ssize_t put = write(out_fd, sendfile_buf, (size_t)got);
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
	if (offset != NULL)
		*offset = pos + (off_t)done;
	else if (lseek(in_fd, pos + (off_t)done, SEEK_SET) == -1)
		return -1;
	return (ssize_t)done;
}
