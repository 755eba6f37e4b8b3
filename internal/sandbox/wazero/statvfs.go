package wazero

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"sync"

	"github.com/tetratelabs/wazero/api"
	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"

	"github.com/apysup/apysup/internal/sandbox"
)

// os.statvfs, os.fstatvfs and shutil.disk_usage. Natively statvfs(2)
// answers for the mount a file is on; the WASI build's statvfs
// (python/wasi/_apysup_files.c) stats the file, whose device in stat's
// view (nativeview.go) names its mount, and asks apysup_fs.statvfs for
// that mount, which answers as the native sandbox's would:
//
//   - the writable mounts (the out directory, /workspace, /tmp) are tmpfs
//     of the run's limits natively, so their size and inodes are the
//     limits, and what is used is what the host's tmpfs under them counts
//     (the same kernel's accounting: pages, and an inode per name), or,
//     where they are plain directories (a supervisor not running as root),
//     what their budget counts (budget.go), rounded up to whole blocks;
//   - the read-only root is the host's root filesystem, read-only;
//   - /dev is a tmpfs of the native sandbox's size (sandbox.DevBytes and
//     DevFiles), holding what the view's /dev holds;
//   - each device of /dev is a bind of the host's node: the host's
//     filesystem there.
//
// The flags are the native sandbox's mounts' (native/config_linux.go,
// native/sandbox_linux.go, sandbox.MountTmpfs). What differs is listed in
// docs/parity.md: the read-only binds the native root holds (/usr, the
// guest's files, the job) each have flags and, for the job, a filesystem
// of their own there, and one device here.

// statvfsName is apysup_fs.statvfs(dev, out_ptr) -> errno.
const statvfsName = "statvfs"

// Linux's ST_* flags (statvfs(3)), as python/wasi/include/sys/statvfs.h
// defines them for the guest.
const (
	stRdonly   = 1
	stNosuid   = 2
	stNodev    = 4
	stNoexec   = 8
	stRelatime = 4096
	stValid    = 0x20 // statfs(2)'s f_flags has it; statvfs(3)'s f_flag not
)

const (
	tmpfsMagic = 0x01021994
	// tmpfsBlock is tmpfs's block size, the page size: sizes round up to it.
	tmpfsBlock = 4096
	nameMax    = 255
)

// fsStat is statfs(2)'s answer, the fields statvfs reads.
type fsStat struct {
	magic                                                             int64
	bsize, frsize, blocks, bfree, bavail, files, ffree, fsid, namelen uint64
	flags                                                             uint64
}

// vfsStat is what statvfs(3) answers, in the order the guest reads it.
type vfsStat struct {
	bsize, frsize, blocks, bfree, bavail, files, ffree, favail, fsid, flag, namemax uint64
}

func (v vfsStat) encode() []byte {
	b := make([]byte, 0, 11*8)
	for _, x := range []uint64{v.bsize, v.frsize, v.blocks, v.bfree, v.bavail, v.files, v.ffree, v.favail, v.fsid, v.flag, v.namemax} {
		b = binary.LittleEndian.AppendUint64(b, x)
	}
	return b
}

// writableMount is one of the run's writable mounts once bound: its host
// directory, its bounds and its budget.
type writableMount struct {
	dir          string
	bytes, files int64
	flags        uint64
	budget       *dirBudget
	fsid         uint64 // when dir is not a tmpfs of its own
}

// mountStats answers statvfs for a run's mounts. The writable ones exist
// once the job is bound; until then a file on them cannot be stat'ed
// either (lateFS waits).
type mountStats struct {
	mu       sync.Mutex
	writable map[uint16]writableMount
	devFsid  uint64
}

type mountStatsKey struct{}

func newMountStats() *mountStats {
	return &mountStats{writable: map[uint16]writableMount{}, devFsid: randomFsid()}
}

// randomFsid is a filesystem id for a mount with none on the host: a
// tmpfs's is random per mount (the kernel's s_uuid), natively too.
func randomFsid() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// bind records a writable mount of the job.
func (m *mountStats) bind(dev uint16, dir string, bytes, files int64, flags uint64, fs *budgetDir) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.writable[dev] = writableMount{dir: dir, bytes: bytes, files: files, flags: flags, budget: fs.b, fsid: randomFsid()}
}

// Native mount flags of the writable mounts: /tmp and the workspace are
// nosuid,nodev; the out directory noexec too (native/config_linux.go,
// native/sandbox_linux.go, supervisor's mountWorkspace).
const (
	writableFlags = stNosuid | stNodev | stRelatime
	outFlags      = writableFlags | stNoexec
)

// statvfs answers for the mount whose view device is dev.
func (m *mountStats) statvfs(dev uint16) (vfsStat, experimentalsys.Errno) {
	switch {
	case dev == rootDev:
		v, errno := hostStatvfs("/")
		v.flag |= stRdonly
		return v, errno
	case dev == devDev:
		blocks := uint64((sandbox.DevBytes + tmpfsBlock - 1) / tmpfsBlock)
		used := uint64(1 + len(deviceNames)) // the directory and its nodes
		return vfsStat{bsize: tmpfsBlock, frsize: tmpfsBlock, blocks: blocks, bfree: blocks, bavail: blocks,
			files: sandbox.DevFiles, ffree: sandbox.DevFiles - used, favail: sandbox.DevFiles - used,
			fsid: m.devFsid, flag: stNosuid | stNoexec, namemax: nameMax}, 0
	case dev == procDev:
		return procStatvfs(), 0
	case dev >= firstDeviceDev && int(dev-firstDeviceDev) < len(deviceNames):
		return hostStatvfs(devicesDir + "/" + deviceNames[dev-firstDeviceDev])
	}
	m.mu.Lock()
	w, ok := m.writable[dev]
	m.mu.Unlock()
	if !ok {
		return vfsStat{}, experimentalsys.ENOSYS
	}
	return w.statvfs()
}

// statvfs is a writable mount as the native guest's tmpfs of its limits
// answers.
func (w writableMount) statvfs() (vfsStat, experimentalsys.Errno) {
	blocks := uint64((w.bytes + tmpfsBlock - 1) / tmpfsBlock)
	files := uint64(w.files)
	var usedBlocks, usedFiles uint64
	fsid := w.fsid
	if st, errno := statfs(w.dir); errno != 0 {
		return vfsStat{}, errno
	} else if st.magic == tmpfsMagic && st.bsize == tmpfsBlock {
		usedBlocks, usedFiles, fsid = st.blocks-st.bfree, st.files-st.ffree, st.fsid
	} else {
		bytes, n := w.budget.used()
		usedBlocks, usedFiles = uint64((bytes+tmpfsBlock-1)/tmpfsBlock), uint64(n)
	}
	free := func(total, used uint64) uint64 { return total - min(total, used) }
	return vfsStat{bsize: tmpfsBlock, frsize: tmpfsBlock, blocks: blocks,
		bfree: free(blocks, usedBlocks), bavail: free(blocks, usedBlocks),
		files: files, ffree: free(files, usedFiles), favail: free(files, usedFiles),
		fsid: fsid, flag: w.flags, namemax: nameMax}, 0
}

// hostStatvfs is statvfs(3) of a host path, as glibc computes it from
// statfs(2).
func hostStatvfs(path string) (vfsStat, experimentalsys.Errno) {
	st, errno := statfs(path)
	if errno != 0 {
		return vfsStat{}, errno
	}
	return vfsStat{bsize: st.bsize, frsize: st.frsize, blocks: st.blocks, bfree: st.bfree, bavail: st.bavail,
		files: st.files, ffree: st.ffree, favail: st.ffree, fsid: st.fsid, flag: st.flags &^ stValid,
		namemax: st.namelen}, 0
}

// hostStatvfsCall is apysup_fs.statvfs(dev, out_ptr) -> i32: 0 with the
// 11 fields written at out_ptr, or the WASI errno.
func hostStatvfsCall(ctx context.Context, mod api.Module, stack []uint64) {
	m, _ := ctx.Value(mountStatsKey{}).(*mountStats)
	errno := experimentalsys.ENOSYS
	if m != nil {
		var v vfsStat
		if v, errno = m.statvfs(uint16(min(api.DecodeU32(stack[0]), 0xffff))); errno == 0 &&
			!mod.Memory().Write(api.DecodeU32(stack[1]), v.encode()) {
			errno = experimentalsys.EFAULT
		}
	}
	stack[0] = api.EncodeI32(wasiErrno(errno))
}
