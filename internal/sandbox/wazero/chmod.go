package wazero

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// WASI preview 1 has no call that changes a file's permission bits, so
// os.chmod changed nothing under wazero while stat shows the bits
// (nativeView). apysup_fs.chmod is that call: the WASI build's os.chmod
// (python/wasi/patches/python3.11/wasi-chmod-terminal.patch, through
// __apysup_chmod in python/wasi/_apysup_paths.c) resolves its path as
// every path function does, to a mount (its guest path, as wasi-libc names
// the preopen) and a path inside it, and the mount's nativeView answers
// as the native guest's kernel does: on the guest's own files confinedDir
// changes the host file's bits after checking that no symlink is on the
// way; the read-only mounts answer EROFS, root's directories and /dev's
// devices EPERM.
//
// Only the nine permission bits reach the host: setuid, setgid and sticky
// would make the host file, which the supervisor's user owns, a setuid
// program of that user. The guest's own tmpfs natively keeps them; here a
// request for them sets the other bits and succeeds.
//
// apysup_fs.fd_path gives the guest the path of a descriptor's file, so
// that the calls WASI preview 1 lacks which act through a descriptor
// (fchmod, and fchmodat and the modes of mkdirat and openat relative to a
// directory's) reach apysup_fs.chmod by path: the path wazero opened the
// descriptor by, on its mount, as every path_* call relative to it is
// resolved. It drifts on rename as those calls do, and a file unlinked
// while open has none (ENOENT, where fchmod natively succeeds).
const (
	fsModule   = "apysup_fs"
	chmodName  = "chmod"
	fdPathName = "fd_path"
)

// mountsKey carries a run's mounts (guest path -> FS) from startGuest to
// hostChmod through the context wazero hands to host functions.
type mountsKey struct{}

// mountedAtKey carries them the other way (the FS wazero holds for a
// mount -> its guest path), from startGuest to hostFdPath.
type mountedAtKey struct{}

func exportFS(ctx context.Context, rt wazero.Runtime) error {
	i32 := api.ValueTypeI32
	_, err := rt.NewHostModuleBuilder(fsModule).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostChmod), []api.ValueType{i32, i32, i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("mount_ptr", "mount_len", "path_ptr", "path_len", "mode").
		Export(chmodName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostFdPath), []api.ValueType{i32, i32, i32}, []api.ValueType{i32}).
		WithParameterNames("fd", "buf_ptr", "buf_len").
		Export(fdPathName).
		NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(hostStatvfsCall), []api.ValueType{i32, i32}, []api.ValueType{i32}).
		WithParameterNames("dev", "out_ptr").
		Export(statvfsName).
		Instantiate(ctx)
	if err != nil {
		return fmt.Errorf("wazero: fs module: %w", err)
	}
	return nil
}

// hostChmod is apysup_fs.chmod(mount_ptr, mount_len, path_ptr, path_len,
// mode) -> i32: 0, or the WASI errno.
func hostChmod(ctx context.Context, mod api.Module, stack []uint64) {
	mounts, _ := ctx.Value(mountsKey{}).(map[string]experimentalsys.FS)
	mem := mod.Memory()
	mount, ok1 := mem.Read(api.DecodeU32(stack[0]), api.DecodeU32(stack[1]))
	name, ok2 := mem.Read(api.DecodeU32(stack[2]), api.DecodeU32(stack[3]))
	errno := experimentalsys.EFAULT
	if ok1 && ok2 {
		errno = chmodIn(mounts, string(mount), string(name), fs.FileMode(api.DecodeU32(stack[4])))
	}
	stack[0] = api.EncodeI32(wasiErrno(errno))
}

// hostFdPath is apysup_fs.fd_path(fd, buf_ptr, buf_len) -> i32: the
// length of the guest path of the file fd was opened by, written to buf
// when it fits in buf_len bytes (unterminated), or minus the WASI errno:
// EBADF for a descriptor that is not open, ENOTSUP for one on no mount
// (the standard streams).
func hostFdPath(ctx context.Context, mod api.Module, stack []uint64) {
	at, _ := ctx.Value(mountedAtKey{}).(map[experimentalsys.FS]string)
	p, errno := fdPath(at, mod, api.DecodeI32(stack[0]))
	if errno == 0 && uint32(len(p)) <= api.DecodeU32(stack[2]) && !mod.Memory().Write(api.DecodeU32(stack[1]), []byte(p)) {
		errno = experimentalsys.EFAULT
	}
	if errno != 0 {
		stack[0] = api.EncodeI32(-wasiErrno(errno))
		return
	}
	stack[0] = api.EncodeI32(int32(len(p)))
}

// openedAs is a module instance of the patched wazero
// (third_party/wazero): it names the file system and the path a
// descriptor was opened by. Built against wazero as released (a go build
// outside make) a module has no such method, and fd_path answers ENOSYS.
type openedAs interface {
	OpenedAs(fd int32) (experimentalsys.FS, string, experimentalsys.Errno)
}

// fdPath is the guest path of the file fd of mod was opened by.
func fdPath(at map[experimentalsys.FS]string, mod api.Module, fd int32) (string, experimentalsys.Errno) {
	o, ok := mod.(openedAs)
	if !ok {
		return "", experimentalsys.ENOSYS
	}
	fsys, name, errno := o.OpenedAs(fd)
	if errno != 0 {
		return "", errno
	}
	mount, ok := at[fsys]
	if !ok {
		return "", experimentalsys.ENOTSUP
	}
	return path.Join(mount, name), 0
}

// chmodIn changes the bits of name, a path inside the mount at guestPath
// (as wasi-libc names a preopen: without its leading slash, "" for "/").
func chmodIn(mounts map[string]experimentalsys.FS, guestPath, name string, mode fs.FileMode) experimentalsys.Errno {
	fsys, ok := mounts[path.Clean("/"+guestPath)]
	if !ok {
		return experimentalsys.ENOENT
	}
	if name == "" {
		name = "."
	}
	if clean := path.Clean(name); clean != name || path.IsAbs(name) || clean == ".." || strings.HasPrefix(clean, "../") {
		return experimentalsys.EINVAL // wasi-libc hands over clean, relative paths only
	}
	return fsys.Chmod(name, mode&fs.ModePerm)
}

// wasiErrno is errno's number in WASI preview 1 (wasi-libc's errno.h),
// 0 for none.
func wasiErrno(errno experimentalsys.Errno) int32 {
	if errno == 0 {
		return 0
	}
	if n, ok := wasiErrnos[errno]; ok {
		return n
	}
	return wasiErrnos[experimentalsys.EIO]
}

var wasiErrnos = map[experimentalsys.Errno]int32{
	experimentalsys.EACCES: 2, experimentalsys.EAGAIN: 6, experimentalsys.EBADF: 8, experimentalsys.EEXIST: 20,
	experimentalsys.EFAULT: 21, experimentalsys.EINTR: 27, experimentalsys.EINVAL: 28, experimentalsys.EIO: 29,
	experimentalsys.EISDIR: 31, experimentalsys.ELOOP: 32, experimentalsys.ENAMETOOLONG: 37, experimentalsys.ENOENT: 44,
	experimentalsys.ENOSYS: 52, experimentalsys.ENOTDIR: 54, experimentalsys.ENOTEMPTY: 55, experimentalsys.ENOTSOCK: 57,
	experimentalsys.ENOTSUP: 58, experimentalsys.EPERM: 63, experimentalsys.ERANGE: 68, experimentalsys.EROFS: 69,
}
