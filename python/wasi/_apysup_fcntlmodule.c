// The fcntl module under WASI: CPython's own Modules/fcntlmodule.c, built
// (Setup.local in build.sh) with Linux's names and numbers, and its three
// calls answered as the native guest's by _apysup_fcntl.c. wasi-libc has
// no flock, and its fcntl and ioctl know WASI's few commands with its own
// flag values; the module's other callers (posixmodule.c) keep wasi-libc's.

#define PY_SSIZE_T_CLEAN // as fcntlmodule.c, whose own define comes too late
#include "Python.h"

// glibc has no stropts.h (STREAMS), so the native module has no I_*
// names; wasi-libc has one.
#undef HAVE_STROPTS_H

// Constants as glibc's 64-bit long holds them: DN_MULTISHOT is 0x80000000,
// which wasm32's long would turn negative.
#undef PyModule_AddIntMacro
#define PyModule_AddIntMacro(m, c) _apysup_add_constant(m, #c, (long long)(c))

static int _apysup_add_constant(PyObject *m, const char *name, long long value)
{
    PyObject *o = PyLong_FromLongLong(value);
    if (o == NULL) {
        return -1;
    }
    int r = PyModule_AddObjectRef(m, name, o);
    Py_DECREF(o);
    return r;
}

#include <fcntl.h>
#include <sys/file.h>
#include <sys/ioctl.h>

int _apysup_fcntl(int fd, int cmd, ...);
int _apysup_flock(int fd, int operation);
int _apysup_ioctl(int fd, int request, ...);

// Function-like, so that `struct flock` keeps its name.
#define fcntl(...) _apysup_fcntl(__VA_ARGS__)
#define flock(fd, operation) _apysup_flock(fd, operation)
#define ioctl(...) _apysup_ioctl(__VA_ARGS__)
#define HAVE_FLOCK 1

// Linux's commands and flags, as glibc's headers give them to the module
// natively (asm-generic/fcntl.h, linux/fcntl.h, sys/file.h).
#undef F_DUPFD
#define F_DUPFD 0
#undef F_GETFD
#define F_GETFD 1
#undef F_SETFD
#define F_SETFD 2
#undef F_GETFL
#define F_GETFL 3
#undef F_SETFL
#define F_SETFL 4
#undef F_GETLK
#define F_GETLK 5
#undef F_SETLK
#define F_SETLK 6
#undef F_SETLKW
#define F_SETLKW 7
#undef F_SETOWN
#define F_SETOWN 8
#undef F_GETOWN
#define F_GETOWN 9
#undef F_SETSIG
#define F_SETSIG 10
#undef F_GETSIG
#define F_GETSIG 11
#undef F_GETLK64
#define F_GETLK64 5
#undef F_SETLK64
#define F_SETLK64 6
#undef F_SETLKW64
#define F_SETLKW64 7
#undef F_OFD_GETLK
#define F_OFD_GETLK 36
#undef F_OFD_SETLK
#define F_OFD_SETLK 37
#undef F_OFD_SETLKW
#define F_OFD_SETLKW 38
#undef F_SETLEASE
#define F_SETLEASE 1024
#undef F_GETLEASE
#define F_GETLEASE 1025
#undef F_NOTIFY
#define F_NOTIFY 1026
#undef F_DUPFD_CLOEXEC
#define F_DUPFD_CLOEXEC 1030
#undef F_SETPIPE_SZ
#define F_SETPIPE_SZ 1031
#undef F_GETPIPE_SZ
#define F_GETPIPE_SZ 1032
#undef F_ADD_SEALS
#define F_ADD_SEALS 1033
#undef F_GET_SEALS
#define F_GET_SEALS 1034
#undef F_SEAL_SEAL
#define F_SEAL_SEAL 0x0001
#undef F_SEAL_SHRINK
#define F_SEAL_SHRINK 0x0002
#undef F_SEAL_GROW
#define F_SEAL_GROW 0x0004
#undef F_SEAL_WRITE
#define F_SEAL_WRITE 0x0008
#undef F_RDLCK
#define F_RDLCK 0
#undef F_WRLCK
#define F_WRLCK 1
#undef F_UNLCK
#define F_UNLCK 2
#undef F_EXLCK
#define F_EXLCK 4
#undef F_SHLCK
#define F_SHLCK 8
#undef FD_CLOEXEC
#define FD_CLOEXEC 1
#undef FASYNC
#define FASYNC 020000
#undef DN_ACCESS
#define DN_ACCESS 0x00000001
#undef DN_MODIFY
#define DN_MODIFY 0x00000002
#undef DN_CREATE
#define DN_CREATE 0x00000004
#undef DN_DELETE
#define DN_DELETE 0x00000008
#undef DN_RENAME
#define DN_RENAME 0x00000010
#undef DN_ATTRIB
#define DN_ATTRIB 0x00000020
#undef DN_MULTISHOT
#define DN_MULTISHOT 0x80000000u
#undef LOCK_SH
#define LOCK_SH 1
#undef LOCK_EX
#define LOCK_EX 2
#undef LOCK_NB
#define LOCK_NB 4
#undef LOCK_UN
#define LOCK_UN 8
#undef LOCK_MAND
#define LOCK_MAND 32
#undef LOCK_READ
#define LOCK_READ 64
#undef LOCK_WRITE
#define LOCK_WRITE 128
#undef LOCK_RW
#define LOCK_RW 192

#include "fcntlmodule.c"
