/*
 * Path resolution as the native guest's kernel does it, where wasi-libc
 * and wazero resolve a path lexically. build.sh links this object with
 * -Wl,--wrap=__wasilibc_find_relpath_alloc.
 *
 * Every path function of wasi-libc (open, and opendir through it, stat,
 * lstat, access, mkdir, rmdir, unlink, rename, link, symlink, readlink,
 * utime, scandir, chdir) finds its preopened directory and the path
 * relative to it through __wasilibc_find_relpath_alloc, which joins the
 * path to the emulated working directory. Two answers differed from
 * Linux's, and are mended here:
 *
 *  - An empty path named the working directory, so os.stat("") succeeded
 *    and os.makedirs(os.path.dirname("name"), exist_ok=True) passed, where
 *    Linux answers ENOENT and the same script fails natively.
 *  - wazero cleans a path lexically before the host resolves it, so "f/.",
 *    "f/.." and "f/./x" named f or its directory when f is a file, where
 *    Linux answers ENOTDIR (and ENOENT when f does not exist): a name that
 *    a "." or ".." component follows must be a directory. Such a name is
 *    looked up once more, with the WASI call stat(2) itself uses.
 *  - wasi-libc joins a relative path to the working directory and keeps
 *    its ".." components, and wazero refuses one that climbs above the
 *    mount it starts in (EPERM): "../workspace/f" from /workspace, or
 *    "/tmp/../workspace/f", failed, and os.chdir("d/..") left os.getcwd()
 *    at "/workspace/d/..". Once every name before a "." or ".." is known
 *    to be a directory, the path is made absolute and its dots resolved
 *    here, as the kernel would: a name that a ".." follows is read as a
 *    symlink first, and when it is one the walk goes on from its target,
 *    so that "deep/../new", deep -> dir/sub, is dir/new (physical, below).
 *
 * The callers turn a failed lookup into ENOTCAPABLE, so a path that must
 * fail is not refused here: it is replaced by one the host refuses for
 * every operation with Linux's errno. A name that is not a directory
 * becomes "NAME/x" (the host answers ENOTDIR, or why NAME did not
 * resolve); an empty path becomes EMPTY_STANDIN, in a directory of the
 * read-only root that does not exist (ENOENT, whatever the operation).
 * The guest's exception still names the path it gave: CPython builds it
 * from its own argument.
 *
 * rename and link are wrapped too (-Wl,--wrap=rename,--wrap=link): wazero
 * answers ENOSYS for two paths on different mounts, where Linux answers
 * EXDEV (shutil.move copies on any OSError; a script that tests errno
 * sees EXDEV on both backends), and an empty path, whose stand-in lies on
 * another mount than the other path, is ENOENT before either is looked
 * up.
 *
 * getcwd is wrapped as well (-Wl,--wrap=getcwd): wasi-libc's working
 * directory is a string, so after the directory is removed (a script
 * leaving a TemporaryDirectory it had entered) os.getcwd() still answered
 * its name, where Linux answers ENOENT; os.path.abspath and pathlib's
 * resolve() then built paths on it. The name is looked up once: a name
 * that no longer resolves to a directory is ENOENT. (A directory made
 * again under the same name is the working directory here, where the
 * kernel keeps the removed one; no script relies on that.)
 *
 * chdir is wrapped (-Wl,--wrap=chdir) to keep that string free of links:
 * the kernel's working directory is the directory, so os.chdir through a
 * link makes os.getcwd() name the link's target, and a ".." climb from
 * there. The path is resolved here, every link on it, before wasi-libc's
 * chdir stores it.
 *
 * __apysup_chmod (at the end) gives CPython's os.chmod the chmod WASI
 * preview 1 lacks, through the host's apysup_fs.chmod, and open and mkdir
 * (-Wl,--wrap=open,--wrap=mkdir) create with the mode they are given.
 * Through a descriptor, fchmod and fchmodat change modes, openat and
 * mkdirat (-Wl,--wrap=openat,--wrap=mkdirat) create with theirs, and
 * linkat is made by path, by the guest path the host's apysup_fs.fd_path
 * gives for a descriptor (at_path).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <wasi/api.h>

int __real___wasilibc_find_relpath_alloc(const char *path, const char **abs_prefix, char **relative_buf,
                                         size_t *relative_buf_len, int can_realloc);

/* The buffer of the lookups made here: wasi-libc's callers keep their
 * relative paths in buffers of their own (rename holds two at once), which
 * a lookup of ours must not overwrite. */
static char *check_buf;
static size_t check_buf_len;

static int is_dot(const char *c, size_t n) {
	return (n == 1 && c[0] == '.') || (n == 2 && c[0] == '.' && c[1] == '.');
}

#define EMPTY_STANDIN "/.apysup-empty-path/x"

extern char *__wasilibc_cwd; /* wasi-libc's working directory, absolute, no dots */

/* next_component returns the component of a path that starts at or after
 * *p (past any slashes), sets *n to its length (0 at the path's end) and
 * moves *p past it. */
static const char *next_component(const char **p, size_t *n) {
	while (**p == '/')
		(*p)++;
	const char *start = *p;
	while (**p != '\0' && **p != '/')
		(*p)++;
	*n = (size_t)(*p - start);
	return start;
}

/* append_resolved appends the components of path to out (of length *len,
 * absolute, without dots), dropping "." and taking ".." as its parent. */
static void append_resolved(char *out, size_t *len, const char *path) {
	size_t n;
	for (const char *c = next_component(&path, &n); n != 0; c = next_component(&path, &n)) {
		if (n == 1 && c[0] == '.')
			continue;
		if (is_dot(c, n)) { /* ".." */
			while (*len > 0 && out[*len - 1] != '/')
				(*len)--;
			if (*len > 0)
				(*len)--; /* the slash */
			continue;
		}
		out[(*len)++] = '/';
		memcpy(out + *len, c, n);
		*len += n;
	}
	out[*len] = '\0';
}

/* dir_at returns 0 if path (absolute, without dots) names a directory (a
 * symlink to one counts), else -1. */
static int dir_at(const char *path) {
	const char *abs;
	int fd = __real___wasilibc_find_relpath_alloc(path, &abs, &check_buf, &check_buf_len, 1);
	if (fd == -1)
		return -1;
	__wasi_filestat_t st;
	if (__wasi_path_filestat_get(fd, __WASI_LOOKUPFLAGS_SYMLINK_FOLLOW, check_buf, &st) != 0)
		return -1;
	return st.filetype == __WASI_FILETYPE_DIRECTORY ? 0 : -1;
}

/* has_dots says whether path has a "." or ".." component. */
static int has_dots(const char *p) {
	size_t n;
	for (const char *c = next_component(&p, &n); n != 0; c = next_component(&p, &n))
		if (is_dot(c, n))
			return 1;
	return 0;
}

/* last_dotdot returns where the last ".." component of p starts, or NULL
 * when it has none. */
static const char *last_dotdot(const char *p) {
	const char *last = NULL;
	size_t n;
	for (const char *c = next_component(&p, &n); n != 0; c = next_component(&p, &n))
		if (n == 2 && c[0] == '.' && c[1] == '.')
			last = c;
	return last;
}

/* The kernel's bound on the links one lookup follows (ELOOP past it). */
#define MAX_LINKS 40

/* link_target returns the target of the symlink at path (absolute, without
 * dots), in memory the caller frees, or NULL when path is no link: not one,
 * missing, or unreadable, which the walk's next step then finds. */
static char *link_target(const char *path) {
	const char *prefix;
	int fd = __real___wasilibc_find_relpath_alloc(path, &prefix, &check_buf, &check_buf_len, 1);
	if (fd == -1)
		return NULL;
	for (size_t cap = 256; cap <= 2 * PATH_MAX; cap *= 2) {
		char *target = malloc(cap);
		if (target == NULL)
			return NULL;
		size_t used;
		if (__wasi_path_readlink(fd, check_buf, (uint8_t *)target, cap, &used) != 0) {
			free(target);
			return NULL;
		}
		if (used < cap) {
			target[used] = '\0';
			return target;
		}
		free(target);
	}
	return NULL;
}

/* A growing string, always NUL-terminated once anything is put in it. */
struct text {
	char *s;
	size_t len, cap;
};

static int put(struct text *t, const char *s, size_t n) {
	if (t->len + n + 1 > t->cap) {
		size_t cap = (t->len + n + 1) * 2;
		char *grown = realloc(t->s, cap);
		if (grown == NULL)
			return -1;
		t->s = grown;
		t->cap = cap;
	}
	memcpy(t->s + t->len, s, n);
	t->len += n;
	t->s[t->len] = '\0';
	return 0;
}

/* physical returns path made absolute with its dots resolved as the
 * kernel resolves them, in memory the caller frees, or NULL (out of
 * memory). A name that a ".." follows (every name, when all is set) is
 * read as a symlink; a link's target takes its place and the walk goes on
 * through it, from the link's directory (or from "/", for an absolute
 * target), as many as MAX_LINKS links; past those, names are taken as they
 * are, and the host finds the loop. A name that a "." or ".." follows must
 * be a directory: the path becomes "NAME/x" there, which the host answers
 * with ENOTDIR, or with why NAME did not resolve. The working directory a
 * relative path starts from has no links in it (chdir, below). A trailing
 * slash is kept. */
static char *physical(const char *path, int all) {
	struct text out = {NULL, 0, 0};
	char *rest = strdup(path);
	if (rest == NULL || put(&out, "", 0) != 0)
		goto fail;
	if (rest[0] != '/') {
		size_t len = 0;
		char *cwd = malloc(strlen(__wasilibc_cwd) + 2);
		if (cwd == NULL)
			goto fail;
		append_resolved(cwd, &len, __wasilibc_cwd);
		int err = put(&out, cwd, len);
		free(cwd);
		if (err != 0)
			goto fail;
	}
	int links = 0, after_name = 0, bad = 0;
	const char *p = rest;
	const char *until = last_dotdot(rest); /* names before it are read as links */
	size_t n;
	for (const char *c = next_component(&p, &n); n != 0; c = next_component(&p, &n)) {
		if (is_dot(c, n)) {
			if (after_name && dir_at(out.s) != 0) {
				bad = 1;
				break;
			}
			after_name = 0;
			if (n == 2) { /* "..": the parent of what is walked so far */
				while (out.len > 0 && out.s[out.len - 1] != '/')
					out.len--;
				if (out.len > 0)
					out.len--;
				out.s[out.len] = '\0';
			}
			continue;
		}
		size_t dir_len = out.len;
		if (put(&out, "/", 1) != 0 || put(&out, c, n) != 0)
			goto fail;
		after_name = 1;
		if (links >= MAX_LINKS || !(all || (until != NULL && c < until)))
			continue;
		char *target = link_target(out.s);
		if (target == NULL)
			continue;
		links++;
		out.len = target[0] == '/' ? 0 : dir_len;
		out.s[out.len] = '\0';
		/* The target, then what followed the link. */
		char *next = malloc(strlen(target) + strlen(p) + 2);
		if (next == NULL) {
			free(target);
			goto fail;
		}
		strcpy(next, target);
		strcat(next, "/");
		strcat(next, p);
		free(target);
		free(rest);
		rest = next;
		p = rest;
		until = last_dotdot(rest);
		after_name = 0;
	}
	/* A trailing slash is kept, but for chdir (all): a working directory
	   has none. */
	size_t path_len = strlen(path);
	int slash = out.len == 0 || (!all && path[path_len - 1] == '/');
	const char *tail = bad ? "/x" : slash ? "/" : "";
	if (put(&out, tail, strlen(tail)) != 0)
		goto fail;
	free(rest);
	return out.s;
fail:
	free(rest);
	free(out.s);
	return NULL;
}

int __wrap___wasilibc_find_relpath_alloc(const char *path, const char **abs_prefix, char **relative_buf,
                                         size_t *relative_buf_len, int can_realloc) {
	if (path[0] == '\0')
		path = EMPTY_STANDIN;
	if (strchr(path, '.') == NULL || !has_dots(path))
		return __real___wasilibc_find_relpath_alloc(path, abs_prefix, relative_buf, relative_buf_len, can_realloc);
	char *instead = physical(path, 0);
	if (instead == NULL) {
		errno = ENOMEM;
		return -1;
	}
	int fd = __real___wasilibc_find_relpath_alloc(instead, abs_prefix, relative_buf, relative_buf_len, can_realloc);
	free(instead);
	return fd;
}

int __real_chdir(const char *path);

int __wrap_chdir(const char *path) {
	if (path[0] == '\0')
		return __real_chdir(path);
	char *instead = physical(path, 1);
	if (instead == NULL) {
		errno = ENOMEM;
		return -1;
	}
	int r = __real_chdir(instead);
	free(instead);
	return r;
}

/* A descriptor's file as a guest path: the host's apysup_fs.fd_path gives
 * the path wazero opened it by, as every path relative to it is resolved
 * (internal/sandbox/wazero/chmod.go). The calls WASI preview 1 lacks that
 * act through a descriptor are made by path with it: fchmod and fchmodat
 * (os.chmod with a descriptor, dir_fd or follow_symlinks=False), the modes
 * mkdirat and openat create with (os.mkdir and os.open with dir_fd), and
 * linkat (os.link with follow_symlinks=False, or with a dir_fd), which
 * wasi-libc and wazero get wrong (below). */
__attribute__((import_module("apysup_fs"), import_name("fd_path")))
int32_t __apysup_fs_fd_path(int32_t fd, char *buf, size_t buf_len);

/* fd_path returns the guest path of fd's file, allocated, or NULL with
 * errno set: EBADF, or ENOTSUP for a descriptor on no mount. */
static char *fd_path(int fd) {
	size_t cap = PATH_MAX;
	for (;;) {
		char *buf = malloc(cap);
		if (buf == NULL)
			return NULL;
		int32_t n = __apysup_fs_fd_path(fd, buf, cap);
		if (n < 0) {
			free(buf);
			errno = -n;
			return NULL;
		}
		if ((size_t)n < cap) {
			buf[n] = '\0';
			return buf;
		}
		free(buf);
		cap = (size_t)n + 1;
	}
}

/* at_path returns path, relative to dirfd, as a guest path, allocated: path
 * itself when it is absolute or dirfd is AT_FDCWD. NULL with errno set as
 * the kernel answers: ENOENT for an empty path, EBADF for a descriptor
 * that is not open, ENOTDIR for one that is no directory. */
static char *at_path(int dirfd, const char *path) {
	if (path[0] == '\0') {
		errno = ENOENT;
		return NULL;
	}
	if (path[0] == '/' || dirfd == AT_FDCWD)
		return strdup(path);
	struct stat st;
	if (fstat(dirfd, &st) != 0)
		return NULL;
	if (!S_ISDIR(st.st_mode)) {
		errno = ENOTDIR;
		return NULL;
	}
	char *dir = fd_path(dirfd);
	if (dir == NULL)
		return NULL;
	size_t d = strlen(dir), p = strlen(path);
	char *out = malloc(d + p + 2);
	if (out != NULL) {
		memcpy(out, dir, d);
		if (d == 0 || dir[d - 1] != '/')
			out[d++] = '/';
		memcpy(out + d, path, p + 1);
	}
	free(dir);
	return out;
}


int __real_rename(const char *old, const char *new);
int __real_link(const char *old, const char *new);
int __real_rmdir(const char *path);
int __real_unlink(const char *path);
int __real_symlink(const char *target, const char *path);
int __real_mkdirat(int dirfd, const char *path, mode_t mode);
int __real_renameat(int olddirfd, const char *old, int newdirfd, const char *new);
int __real_symlinkat(const char *target, int dirfd, const char *path);

/* A path whose last component is "." or "..", or the root itself, names
 * no entry to make, remove or rename: the kernel's walk (fs/namei.c) sees
 * LAST_DOT, LAST_DOTDOT or LAST_ROOT where a call needs LAST_NORM, and
 * answers before it touches anything: rmdir EINVAL, ENOTEMPTY or EBUSY;
 * unlink EISDIR; mkdir, link's and symlink's new name EEXIST; rename
 * EBUSY (EXDEV first, across mounts). wazero cleans such a path
 * lexically, so that rmdir("d/.") removed d, os.rmdir(".") the working
 * directory and rename("d/.", "e") moved d. The directory before the
 * last component is looked up first, as the kernel does, and its errors
 * (ENOENT, ENOTDIR) come first. Wrapped: --wrap=rmdir,unlink,symlink and
 * the *at forms CPython calls with dir_fd (mkdirat, renameat, linkat,
 * symlinkat); mkdir, rename and link are wrapped above and below. */
enum last_kind { LAST_NORM, LAST_DOT, LAST_DOTDOT, LAST_ROOT };

/* last_kind names path's last component (trailing slashes aside) and
 * copies the path before it into parent, of PATH_MAX bytes: "." when
 * there is none, "/" for the root. A parent too long to copy counts as a
 * name: the call itself answers ENAMETOOLONG. */
static enum last_kind last_kind(const char *path, char *parent) {
	size_t end = strlen(path);
	while (end > 0 && path[end - 1] == '/')
		end--;
	if (end == 0) {
		strcpy(parent, "/");
		return path[0] == '/' ? LAST_ROOT : LAST_NORM;
	}
	size_t start = end;
	while (start > 0 && path[start - 1] != '/')
		start--;
	if (start >= PATH_MAX)
		return LAST_NORM;
	if (start == 0)
		strcpy(parent, ".");
	else {
		memcpy(parent, path, start);
		parent[start] = '\0';
	}
	if (!is_dot(path + start, end - start))
		return LAST_NORM;
	return end - start == 1 ? LAST_DOT : LAST_DOTDOT;
}

/* dir_errno stats path (relative to dirfd, or the working directory for
 * AT_FDCWD) into st: 0 for a directory, else the lookup's errno (ENOTDIR
 * for another file). */
static int dir_errno(int dirfd, const char *path, struct stat *st) {
	int r = dirfd == AT_FDCWD ? stat(path, st) : fstatat(dirfd, path, st, 0);
	if (r != 0)
		return errno;
	return S_ISDIR(st->st_mode) ? 0 : ENOTDIR;
}

/* not_a_name is the errno the kernel answers a call whose last component
 * (of path, relative to dirfd) is ".", ".." or the root, by kind: e[0]
 * for ".", e[1] for "..", e[2] for the root, or the lookup's of the
 * directory before it, which comes first; 0 for a name. (A path form's
 * lookup would fail the same way below; an *at form's would not: wazero
 * cleans "missing/." to "missing", which mkdirat then made.) not_a_name_of
 * is not_a_name for a path whose kind and parent last_kind gave. */
static int not_a_name_of(int dirfd, enum last_kind k, const char *parent, const int e[3]) {
	if (k == LAST_NORM)
		return 0;
	struct stat st;
	int lookup = dir_errno(dirfd, parent, &st);
	return lookup ? lookup : e[k - 1];
}

static int not_a_name(int dirfd, const char *path, const int e[3]) {
	char parent[PATH_MAX];
	enum last_kind k = last_kind(path, parent);
	return not_a_name_of(dirfd, k, parent, e);
}

static const int rmdir_errnos[3] = {EINVAL, ENOTEMPTY, EBUSY};
static const int unlink_errnos[3] = {EISDIR, EISDIR, EISDIR};
static const int create_errnos[3] = {EEXIST, EEXIST, EEXIST};

/* fail sets errno to e and answers -1. */
static int fail(int e) {
	errno = e;
	return -1;
}

/* rename_not_a_name: rename's answer when either path's last component
 * is not a name, once both directories before them resolve: EXDEV across
 * mounts, else EBUSY. */
static int rename_not_a_name(int olddirfd, const char *old, int newdirfd, const char *new) {
	char old_parent[PATH_MAX], new_parent[PATH_MAX];
	enum last_kind ok = last_kind(old, old_parent), nk = last_kind(new, new_parent);
	if (ok == LAST_NORM && nk == LAST_NORM)
		return 0;
	struct stat os, ns;
	int lookup = dir_errno(olddirfd, old_parent, &os);
	if (lookup == 0)
		lookup = dir_errno(newdirfd, new_parent, &ns);
	if (lookup)
		return lookup;
	return os.st_dev != ns.st_dev ? EXDEV : EBUSY;
}

/* link_not_a_name: link's answer when its new name is not one, after the
 * existing file's lookup (the kernel looks it up first). */
static int link_not_a_name(int olddirfd, const char *old, int newdirfd, const char *new, int follow) {
	char parent[PATH_MAX];
	enum last_kind k = last_kind(new, parent);
	if (k == LAST_NORM)
		return 0;
	struct stat st;
	int r = olddirfd == AT_FDCWD ? (follow ? stat(old, &st) : lstat(old, &st))
	                             : fstatat(olddirfd, old, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW);
	return r != 0 ? errno : not_a_name_of(newdirfd, k, parent, create_errnos);
}

int __wrap_rmdir(const char *path) {
	int e = not_a_name(AT_FDCWD, path, rmdir_errnos);
	return e ? fail(e) : __real_rmdir(path);
}

int __wrap_unlink(const char *path) {
	int e = not_a_name(AT_FDCWD, path, unlink_errnos);
	return e ? fail(e) : __real_unlink(path);
}

int __wrap_symlink(const char *target, const char *path) {
	int e = not_a_name(AT_FDCWD, path, create_errnos);
	return e ? fail(e) : __real_symlink(target, path);
}

static int created_at(int dirfd, const char *path, mode_t mode, mode_t host_default); /* below */

int __wrap_mkdirat(int dirfd, const char *path, mode_t mode) {
	int e = not_a_name(dirfd, path, create_errnos);
	if (e)
		return fail(e);
	int r = __real_mkdirat(dirfd, path, mode);
	return r == 0 ? created_at(dirfd, path, mode, 0755) : r;
}

int __wrap_renameat(int olddirfd, const char *old, int newdirfd, const char *new) {
	int e = rename_not_a_name(olddirfd, old, newdirfd, new);
	return e ? fail(e) : __real_renameat(olddirfd, old, newdirfd, new);
}

int __wrap_link(const char *old, const char *new); /* below */

/* linkat is made by path, link's: wasi-libc's answered ENOENT for every
 * relative path with AT_FDCWD (os.link(a, b, follow_symlinks=False)), and
 * wazero's path_link follows no link, so AT_SYMLINK_FOLLOW (os.link with a
 * dir_fd) linked the link itself. The old path is resolved through its
 * links here when asked, as the kernel follows them (a dangling one is
 * ENOENT). */
int __wrap_linkat(int olddirfd, const char *old, int newdirfd, const char *new, int flags) {
	int follow = flags & AT_SYMLINK_FOLLOW;
	int e = link_not_a_name(olddirfd, old, newdirfd, new, follow);
	if (e)
		return fail(e);
	if (flags & ~AT_SYMLINK_FOLLOW)
		return fail(EINVAL);
	char *from = at_path(olddirfd, old), *to = at_path(newdirfd, new);
	int r = -1;
	if (from != NULL && to != NULL && follow) {
		char *target = physical(from, 1);
		free(from);
		from = target;
		if (from == NULL)
			errno = ENOMEM;
	}
	if (from != NULL && to != NULL)
		r = __wrap_link(from, to);
	free(from);
	free(to);
	return r;
}

int __wrap_symlinkat(const char *target, int dirfd, const char *path) {
	int e = not_a_name(dirfd, path, create_errnos);
	return e ? fail(e) : __real_symlinkat(target, dirfd, path);
}

/* across_mounts is ret, with wazero's ENOSYS for two mounts made Linux's
 * EXDEV. */
static int across_mounts(int ret) {
	if (ret == -1 && errno == ENOSYS)
		errno = EXDEV;
	return ret;
}

int __wrap_rename(const char *old, const char *new) {
	if (old[0] == '\0' || new[0] == '\0') {
		errno = ENOENT;
		return -1;
	}
	int e = rename_not_a_name(AT_FDCWD, old, AT_FDCWD, new);
	return e ? fail(e) : across_mounts(__real_rename(old, new));
}

int _apysup_read_only(const char *dir); /* _apysup_files.c */

/* link_across is link's answer for two names on two mounts (wazero's
 * ENOSYS), in the kernel's order: the existing file's lookup, then the new
 * name's (EEXIST when it is taken, its directory's lookup), then a new
 * name on a read-only mount's EROFS, and only then EXDEV. wazero answered
 * EXDEV first, so os.link onto an existing name, or of a missing file,
 * across two mounts was EXDEV where natively it is EEXIST or ENOENT. */
static int link_across(const char *old, const char *new) {
	struct stat st;
	if (lstat(old, &st) != 0)
		return errno;
	if (lstat(new, &st) == 0)
		return EEXIST;
	char parent[PATH_MAX];
	last_kind(new, parent);
	int e = dir_errno(AT_FDCWD, parent, &st);
	if (e)
		return e;
	return _apysup_read_only(parent) ? EROFS : EXDEV;
}

int __wrap_link(const char *old, const char *new) {
	if (old[0] == '\0' || new[0] == '\0') {
		errno = ENOENT;
		return -1;
	}
	int e = link_not_a_name(AT_FDCWD, old, AT_FDCWD, new, 0);
	if (e)
		return fail(e);
	int r = __real_link(old, new);
	return r == -1 && errno == ENOSYS ? fail(link_across(old, new)) : r;
}

char *__real_getcwd(char *buf, size_t size);

char *__wrap_getcwd(char *buf, size_t size) {
	char *cwd = __real_getcwd(buf, size);
	if (cwd == NULL)
		return NULL;
	struct stat st;
	int gone = stat(cwd, &st) != 0 ? (errno == ENOENT || errno == ENOTDIR) : !S_ISDIR(st.st_mode);
	if (!gone)
		return cwd;
	if (buf == NULL)
		free(cwd);
	errno = ENOENT;
	return NULL;
}

/* chmod, which WASI preview 1 does not have: the host's apysup_fs.chmod
 * changes the bits of a path inside one of the run's mounts, named as
 * wasi-libc names its preopen (internal/sandbox/wazero/chmod.go). The path
 * is resolved here as every path function resolves it. CPython's
 * os.chmod calls this under WASI
 * (patches/python3.11/wasi-chmod-terminal.patch). */
__attribute__((import_module("apysup_fs"), import_name("chmod")))
int32_t __apysup_fs_chmod(const char *mount, size_t mount_len, const char *path, size_t path_len, uint32_t mode);

int __apysup_chmod(const char *path, mode_t mode) {
	const char *mount;
	char *relative = NULL;
	size_t relative_len = 0;
	int fd = __wrap___wasilibc_find_relpath_alloc(path, &mount, &relative, &relative_len, 1);
	if (fd == -1) {
		free(relative);
		return -1;
	}
	int32_t err = __apysup_fs_chmod(mount, strlen(mount), relative, strlen(relative), (uint32_t)mode);
	free(relative);
	if (err != 0) {
		errno = err;
		return -1;
	}
	return 0;
}

/* The mode a file or directory is created with, which WASI preview 1 does
 * not pass: the host creates files 0644 and directories 0755, what the
 * native guest's umask 022 makes of open(..., 0666) and mkdir(..., 0777).
 * open and mkdir are wrapped (-Wl,--wrap=open,--wrap=mkdir) to give what
 * was created any other mode they were asked for (tempfile's 0600 files
 * and 0700 directories, os.mkdir(p, 0o555)) through __apysup_chmod, under
 * the guest's umask: 022 as natively, and umask() sets it (wasi-libc has
 * none; build.sh tells configure this one exists, so os.umask does). */
#include <fcntl.h>
#include <stdarg.h>
#include <unistd.h>

static mode_t guest_umask = 022;

mode_t umask(mode_t mask) {
	mode_t old = guest_umask;
	guest_umask = mask & 0777;
	return old;
}

int __real_open(const char *path, int oflag, ...);
int __real_mkdir(const char *path, mode_t mode);

void _apysup_fd_opened(int fd, int oflag); /* _apysup_fcntl.c */

/* opened ends an open of fd with oflag: a file that could not be given its
 * mode (failed, errno set) is closed and the open fails with that errno;
 * else its flags are recorded for fcntl. */
static int opened(int fd, int oflag, int failed) {
	if (failed) {
		int saved = errno;
		(void)close(fd);
		errno = saved;
		return -1;
	}
	if (fd >= 0)
		_apysup_fd_opened(fd, oflag);
	return fd;
}

int __wrap_open(const char *path, int oflag, ...) {
	if ((oflag & O_CREAT) == 0)
		return opened(__real_open(path, oflag), oflag, 0);
	va_list ap;
	va_start(ap, oflag);
	mode_t mode = va_arg(ap, int);
	va_end(ap);
	mode_t bits = mode & 0777 & ~guest_umask;
	struct stat st;
	int existed = bits != 0644 && (oflag & O_EXCL) == 0 && stat(path, &st) == 0;
	int fd = __real_open(path, oflag, mode);
	return opened(fd, oflag, fd >= 0 && bits != 0644 && !existed && __apysup_chmod(path, bits) != 0);
}

int __wrap_mkdir(const char *path, mode_t mode) {
	int e = not_a_name(AT_FDCWD, path, create_errnos);
	if (e)
		return fail(e);
	int r = __real_mkdir(path, mode);
	mode_t bits = mode & 0777 & ~guest_umask;
	if (r == 0 && bits != 0755)
		r = __apysup_chmod(path, bits);
	return r;
}

/* The calls that change a mode through a descriptor (at_path, above).
 * fchmod of a descriptor on no mount, a standard stream as the WASI build
 * starts: natively stdin is /dev/null, root's device (EPERM), and stdout
 * and stderr pipes, which take the mode. A file unlinked while open has
 * no path left (ENOENT, where fchmod natively succeeds). */
int fchmod(int fd, mode_t mode) {
	char *path = fd_path(fd);
	if (path == NULL)
		return errno != ENOTSUP ? -1 : fd == 0 ? fail(EPERM) : 0;
	int r = __apysup_chmod(path, mode);
	free(path);
	return r;
}

/* fchmodat with AT_SYMLINK_NOFOLLOW changes a file that is no link and
 * answers EOPNOTSUPP for a link, as glibc's does on Linux (os.chmod then
 * raises NotImplementedError, or ValueError with a dir_fd). */
int fchmodat(int dirfd, const char *path, mode_t mode, int flag) {
	if (flag & ~AT_SYMLINK_NOFOLLOW)
		return fail(EINVAL);
	char *p = at_path(dirfd, path);
	if (p == NULL)
		return -1;
	int r = 0;
	struct stat st;
	if ((flag & AT_SYMLINK_NOFOLLOW) && (r = lstat(p, &st)) == 0 && S_ISLNK(st.st_mode)) {
		errno = EOPNOTSUPP;
		r = -1;
	}
	if (r == 0)
		r = __apysup_chmod(p, mode);
	free(p);
	return r;
}

/* created_at gives what mkdirat or openat made at path, relative to dirfd,
 * the mode it was asked for under the guest's umask, as open and mkdir by
 * path do (above), unless that is host_default, the host's. */
static int created_at(int dirfd, const char *path, mode_t mode, mode_t host_default) {
	mode_t bits = mode & 0777 & ~guest_umask;
	if (bits == host_default)
		return 0;
	char *p = at_path(dirfd, path);
	if (p == NULL)
		return -1;
	int r = __apysup_chmod(p, bits);
	free(p);
	return r;
}

int __real_openat(int dirfd, const char *path, int oflag, ...);

/* openat (os.open with a dir_fd) creates with its mode, as open does, and
 * records its flags for fcntl's F_GETFL, as open does. */
int __wrap_openat(int dirfd, const char *path, int oflag, ...) {
	mode_t mode = 0;
	if (oflag & O_CREAT) {
		va_list ap;
		va_start(ap, oflag);
		mode = va_arg(ap, int);
		va_end(ap);
	}
	int chmods = (oflag & O_CREAT) && (mode & 0777 & ~guest_umask) != 0644;
	struct stat st;
	int existed = chmods && (oflag & O_EXCL) == 0 && fstatat(dirfd, path, &st, 0) == 0;
	int fd = __real_openat(dirfd, path, oflag, mode);
	return opened(fd, oflag, fd >= 0 && chmods && !existed && created_at(dirfd, path, mode, 0644) != 0);
}
