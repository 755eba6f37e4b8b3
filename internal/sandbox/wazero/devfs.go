package wazero

import (
	"crypto/rand"
	"io"
	"io/fs"
	"path"
	"testing/fstest"
	"time"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
	"github.com/tetratelabs/wazero/experimental/sysfs"
	"github.com/tetratelabs/wazero/sys"
)

// devicesDir is where the guest finds its character devices, as natively.
const devicesDir = "/dev"

// devices is the guest's /dev: the five character devices scripts open by
// name (os.devnull above all), behaving as the native guest's do. null
// reads as empty; zero and full read zeros; random and urandom read the
// host's crypto/rand; writes are discarded, but full refuses them (EIO:
// wazero has no ENOSPC; the WASI build's write answers ENOSPC). Every seek lands at 0. Nothing else is there, and nothing can be
// created, removed, renamed or retimed (EACCES, as for the native guest's
// uid in its root-owned /dev). Their mode says character device; wasi-libc
// calls a character device that cannot seek a terminal, so isatty() is
// true of them here and false natively (WASI has no other way to say
// "character device").
type devices struct {
	experimentalsys.UnimplementedFS
	dir experimentalsys.FS // the directory itself: stat and listing
}

const deviceMode = fs.ModeDevice | fs.ModeCharDevice | 0o666

var deviceNames = []string{"full", "null", "random", "urandom", "zero"}

// deviceMinors are the minor numbers of deviceNames' host devices (major
// 1, the kernel's memory devices; Documentation/admin-guide/devices.txt),
// which a native guest's stat shows in st_rdev. Each fits the four bits
// viewDev gives it.
var deviceMinors = []uint16{7, 3, 8, 9, 5}

func newDevices() experimentalsys.FS {
	listing := fstest.MapFS{}
	for _, name := range deviceNames {
		listing[name] = &fstest.MapFile{Mode: deviceMode}
	}
	return devices{dir: &sysfs.AdaptFS{FS: listing}}
}

// device names the device at name, "" for none.
func device(name string) string {
	name = path.Clean("/" + name)[1:]
	for _, d := range deviceNames {
		if d == name {
			return d
		}
	}
	return ""
}

func (d devices) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	dev := device(name)
	switch {
	case dev != "" && flag&experimentalsys.O_DIRECTORY != 0:
		return nil, experimentalsys.ENOTDIR
	case dev != "" && flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL:
		return nil, experimentalsys.EEXIST
	case dev != "":
		return openDevice(dev, flag&experimentalsys.O_APPEND != 0)
	}
	st, errno := d.dir.Stat(name)
	switch {
	case errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0:
		return nil, experimentalsys.EACCES
	case errno != 0:
		return nil, errno
	case st.Mode.IsDir() && flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR) != 0:
		return nil, experimentalsys.EISDIR
	}
	return d.dir.OpenFile(name, flag&^(experimentalsys.O_CREAT|experimentalsys.O_TRUNC), perm)
}

func (d devices) Stat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return d.dir.Stat(name)
}

func (d devices) Lstat(name string) (sys.Stat_t, experimentalsys.Errno) {
	return d.dir.Lstat(name)
}

func (d devices) Readlink(name string) (string, experimentalsys.Errno) {
	if _, errno := d.dir.Stat(name); errno != 0 {
		return "", errno
	}
	return "", experimentalsys.EINVAL // not a link
}

func (d devices) Utimens(name string, _, _ int64) experimentalsys.Errno {
	if _, errno := d.dir.Stat(name); errno != 0 {
		return errno
	}
	return experimentalsys.EPERM
}

// Mkdir finds a device's name taken (EEXIST, as the kernel says before it
// looks at permissions), and is refused anywhere else. os.access's W_OK
// asks this way (python/wasi/patches/python3.11/os-access.patch): the
// devices are writable, /dev itself is not, as natively.
func (d devices) Mkdir(name string, _ fs.FileMode) experimentalsys.Errno {
	if device(name) != "" {
		return experimentalsys.EEXIST
	}
	return experimentalsys.EACCES
}

func (devices) Chmod(string, fs.FileMode) experimentalsys.Errno { return experimentalsys.EPERM }
func (devices) Rename(string, string) experimentalsys.Errno     { return experimentalsys.EACCES }
func (devices) Rmdir(string) experimentalsys.Errno              { return experimentalsys.EACCES }
func (devices) Unlink(string) experimentalsys.Errno             { return experimentalsys.EACCES }
func (devices) Link(string, string) experimentalsys.Errno       { return experimentalsys.EACCES }
func (devices) Symlink(string, string) experimentalsys.Errno    { return experimentalsys.EACCES }

// deviceFile is one open device. Its seek (always to 0) and close are the
// embedded file's: sysfs.AdaptFS's over a deviceNode. (wazero's File.Seek
// returns an Errno where go vet wants io.Seeker's error, so a Seek of
// wazero's kind is not declared in this package.)
type deviceFile struct {
	experimentalsys.File
	name              string
	appends, nonblock bool
}

func openDevice(name string, appends bool) (experimentalsys.File, experimentalsys.Errno) {
	f, errno := (&sysfs.AdaptFS{FS: deviceNode{}}).OpenFile(".", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return nil, errno
	}
	return &deviceFile{File: f, name: name, appends: appends}, 0
}

// deviceNode is an fs.FS of one file, itself: empty, and every seek lands
// at 0.
type deviceNode struct{}

func (deviceNode) Open(string) (fs.File, error)   { return deviceNode{}, nil }
func (deviceNode) Stat() (fs.FileInfo, error)     { return deviceInfo{}, nil }
func (deviceNode) Read([]byte) (int, error)       { return 0, io.EOF }
func (deviceNode) Seek(int64, int) (int64, error) { return 0, nil }
func (deviceNode) Close() error                   { return nil }

type deviceInfo struct{}

func (deviceInfo) Name() string       { return "device" }
func (deviceInfo) Size() int64        { return 0 }
func (deviceInfo) Mode() fs.FileMode  { return deviceMode }
func (deviceInfo) ModTime() time.Time { return time.Time{} }
func (deviceInfo) IsDir() bool        { return false }
func (deviceInfo) Sys() any           { return nil }

func (f *deviceFile) IsDir() (bool, experimentalsys.Errno) { return false, 0 }
func (f *deviceFile) IsAppend() bool                       { return f.appends }

func (f *deviceFile) SetAppend(enable bool) experimentalsys.Errno {
	f.appends = enable
	return 0
}

func (f *deviceFile) IsNonblock() bool { return f.nonblock }

func (f *deviceFile) SetNonblock(enable bool) experimentalsys.Errno {
	f.nonblock = enable
	return 0
}

func (f *deviceFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{Mode: deviceMode, Nlink: 1}, 0
}

func (f *deviceFile) Read(buf []byte) (int, experimentalsys.Errno) {
	switch f.name {
	case "null":
		return 0, 0
	case "random", "urandom":
		if _, err := rand.Read(buf); err != nil {
			return 0, experimentalsys.EIO
		}
	default: // zero, full
		clear(buf)
	}
	return len(buf), 0
}

func (f *deviceFile) Pread(buf []byte, _ int64) (int, experimentalsys.Errno) { return f.Read(buf) }

func (f *deviceFile) Write(buf []byte) (int, experimentalsys.Errno) {
	if f.name == "full" && len(buf) > 0 {
		return 0, experimentalsys.EIO // wazero has no ENOSPC (the quotas' EIO too)
	}
	return len(buf), 0
}

func (f *deviceFile) Pwrite(buf []byte, _ int64) (int, experimentalsys.Errno) { return f.Write(buf) }

func (f *deviceFile) Readdir(int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	return nil, experimentalsys.ENOTDIR
}

// Truncate, Sync and Datasync are EINVAL on a character device natively.
func (f *deviceFile) Truncate(int64) experimentalsys.Errno { return experimentalsys.EINVAL }
func (f *deviceFile) Sync() experimentalsys.Errno          { return experimentalsys.EINVAL }
func (f *deviceFile) Datasync() experimentalsys.Errno      { return experimentalsys.EINVAL }

func (f *deviceFile) Utimens(int64, int64) experimentalsys.Errno { return experimentalsys.EPERM }
