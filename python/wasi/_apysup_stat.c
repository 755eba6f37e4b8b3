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
 * in the next and the permission bits (setuid, setgid and sticky
 * included) in the low 12. A device field without the magic (the
 * standard streams, which wazero serves itself) is left as it is.
 */
#include <stdint.h>
#include <sys/stat.h>

int __real_fstat(int fd, struct stat *st);
int __real___wasilibc_nocwd_fstatat(int fd, const char *restrict path, struct stat *restrict st, int flag);

#define VIEW_MAGIC 0xa9b5u

static void as_native(struct stat *st)
{
	uint64_t dev = st->st_dev;
	if ((dev >> 48) != VIEW_MAGIC)
		return;
	unsigned owner = (dev >> 16) & 0xffff;
	unsigned id = owner == 1 ? 1000 : owner == 2 ? 65534 : 0; /* the guest, nobody, root */
	st->st_mode = (st->st_mode & S_IFMT) | (mode_t)(dev & 07777);
	st->st_uid = id;
	st->st_gid = id;
	st->st_dev = (dev >> 32) & 0xffff;
}

int __wrap_fstat(int fd, struct stat *st)
{
	int r = __real_fstat(fd, st);
	if (r == 0)
		as_native(st);
	return r;
}

int __wrap___wasilibc_nocwd_fstatat(int fd, const char *restrict path, struct stat *restrict st, int flag)
{
	int r = __real___wasilibc_nocwd_fstatat(fd, path, st, flag);
	if (r == 0)
		as_native(st);
	return r;
}
