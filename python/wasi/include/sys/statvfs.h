/*
 * sys/statvfs.h for the WASI build, which wasi-libc lacks: glibc's struct
 * and Linux's ST_* flags, so that posixmodule.c builds os.statvfs and
 * os.fstatvfs (and shutil.disk_usage follows). _apysup_files.c implements
 * both through the host (apysup_fs.statvfs). The counts are 64 bits wide,
 * as they are natively; wasm32's unsigned long is 32 (posixmodule.c reads
 * them as long long under WASI: wasi-os-host.patch).
 */
#ifndef _APYSUP_SYS_STATVFS_H
#define _APYSUP_SYS_STATVFS_H

#ifdef __cplusplus
extern "C" {
#endif

struct statvfs {
	unsigned long long f_bsize;
	unsigned long long f_frsize;
	unsigned long long f_blocks;
	unsigned long long f_bfree;
	unsigned long long f_bavail;
	unsigned long long f_files;
	unsigned long long f_ffree;
	unsigned long long f_favail;
	unsigned long long f_fsid;
	unsigned long long f_flag;
	unsigned long long f_namemax;
};

int statvfs(const char *__restrict, struct statvfs *__restrict);
int fstatvfs(int, struct statvfs *);

/* Linux's values (glibc's bits/statvfs.h), those os exports. */
#define ST_RDONLY 1
#define ST_NOSUID 2
#define ST_NODEV 4
#define ST_NOEXEC 8
#define ST_SYNCHRONOUS 16
#define ST_MANDLOCK 64
#define ST_WRITE 128
#define ST_APPEND 256
#define ST_NOATIME 1024
#define ST_NODIRATIME 2048
#define ST_RELATIME 4096

#ifdef __cplusplus
}
#endif

#endif
