package wazero

import (
	"crypto/rand"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
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
// calls a character device that cannot seek a terminal, so the WASI
// build's isatty() asks fstat, which names each a memory device
// (deviceMinors), and answers ENOTTY, as natively
// (python/wasi/_apysup_stat.c).
//
// Beside them, as natively, stdin, stdout and stderr are links to
// /proc/self/fd/0, 1 and 2 (readlink answers so; /proc/self has no fd
// here to follow them through): opened, stdin is /dev/null, as the
// guest's stdin is, and stdout and stderr write where the guest's own
// streams do; stat through them answers /dev/null and the guest's pipes.
type devices struct {
	experimentalsys.UnimplementedFS
	dir     experimentalsys.FS          // the directory itself: stat and listing
	streams [len(streamNames)]io.Writer // stdout and stderr's writers; stdin's is nil
}

const deviceMode = fs.ModeDevice | fs.ModeCharDevice | 0o666

var deviceNames = []string{"full", "null", "random", "urandom", "zero"}

// deviceMinors are the minor numbers of deviceNames' host devices (major
// 1, the kernel's memory devices; Documentation/admin-guide/devices.txt),
// which a native guest's stat shows in st_rdev. Each fits the four bits
// viewDev gives it.
var deviceMinors = []uint16{7, 3, 8, 9, 5}

// streamNames are /dev's links to the standard streams, by descriptor.
var streamNames = [...]string{"stdin", "stdout", "stderr"}

const (
	streamLinkMode = fs.ModeSymlink | 0o777
	streamPipeMode = fs.ModeNamedPipe | 0o600 // the guest's own pipes (native's guestPipe)
)

// streamTarget is where the link to descriptor fd points, as natively.
func streamTarget(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

// newDevices is /dev, whose stdout and stderr links write to stdout and
// stderr (the guest's own streams).
func newDevices(stdout, stderr io.Writer) experimentalsys.FS {
	listing := fstest.MapFS{}
	for _, name := range deviceNames {
		listing[name] = &fstest.MapFile{Mode: deviceMode}
	}
	// The listing's entries for the links are files: MapFS would follow a
	// link itself. stream answers for them before the listing is asked.
	for _, name := range streamNames {
		listing[name] = &fstest.MapFile{}
	}
	return devices{dir: &sysfs.AdaptFS{FS: listing}, streams: [len(streamNames)]io.Writer{nil, stdout, stderr}}
}

// stream is the descriptor of the standard stream the link at name
// stands for, -1 for none.
func stream(name string) int { return nameIndex(streamNames[:], name) }

// nameIndex is the index of /dev's entry name (made clean) in names, -1
// for none.
func nameIndex(names []string, name string) int {
	return slices.Index(names, path.Clean("/" + name)[1:])
}

// device names the device at name, "" for none.
func device(name string) string {
	if i := nameIndex(deviceNames, name); i >= 0 {
		return deviceNames[i]
	}
	return ""
}

func (d devices) OpenFile(name string, flag experimentalsys.Oflag, perm fs.FileMode) (experimentalsys.File, experimentalsys.Errno) {
	dev := device(name)
	if fd := stream(name); fd >= 0 {
		switch {
		case flag&experimentalsys.O_NOFOLLOW != 0:
			return nil, experimentalsys.ELOOP
		case fd == 0: // the guest's stdin is /dev/null
			dev = "null"
		default:
			return openStream(d.streams[fd], flag)
		}
	}
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
	case errno == experimentalsys.ENOENT && strings.Contains(strings.Trim(name, "/"), "/"):
		// /dev has no directories: a name on the way is ENOTDIR if it is
		// there, ENOENT if not, before a create is refused.
		first, _, _ := strings.Cut(strings.Trim(name, "/"), "/")
		if device(first) != "" || stream(first) >= 0 {
			return nil, experimentalsys.ENOTDIR
		}
		return nil, experimentalsys.ENOENT
	case errno == experimentalsys.ENOENT && flag&experimentalsys.O_CREAT != 0:
		return nil, experimentalsys.EACCES
	case errno != 0:
		return nil, errno
	case st.Mode.IsDir() && flag&(experimentalsys.O_CREAT|experimentalsys.O_EXCL) == experimentalsys.O_CREAT|experimentalsys.O_EXCL:
		return nil, experimentalsys.EEXIST
	case st.Mode.IsDir() && flag&(experimentalsys.O_WRONLY|experimentalsys.O_RDWR|experimentalsys.O_TRUNC) != 0:
		return nil, experimentalsys.EISDIR
	}
	f, errno := d.dir.OpenFile(name, flag&^(experimentalsys.O_CREAT|experimentalsys.O_TRUNC), perm)
	if errno != 0 || !st.Mode.IsDir() {
		return f, errno
	}
	return devicesListing{f}, 0
}

// devicesListing is /dev's own directory, whose entries have the types the
// native guest's have: the links to the standard streams are links (the
// listing holds files for them, which MapFS would otherwise follow), and
// each device is a regular file, as natively, where a device is bound
// over a regular file the sandbox made and a directory entry's type is
// that of the file the mount covers.
type devicesListing struct{ experimentalsys.File }

func (d devicesListing) Readdir(n int) ([]experimentalsys.Dirent, experimentalsys.Errno) {
	dirents, errno := d.File.Readdir(n)
	for i := range dirents {
		switch {
		case stream(dirents[i].Name) >= 0:
			dirents[i].Type = fs.ModeSymlink
		case device(dirents[i].Name) != "":
			dirents[i].Type = 0
		}
	}
	return dirents, errno
}

func (d devices) Stat(name string) (sys.Stat_t, experimentalsys.Errno) {
	switch stream(name) {
	case -1:
		return d.dir.Stat(name)
	case 0:
		return d.dir.Stat("null")
	}
	return sys.Stat_t{Mode: streamPipeMode, Nlink: 1}, 0
}

func (d devices) Lstat(name string) (sys.Stat_t, experimentalsys.Errno) {
	if fd := stream(name); fd >= 0 {
		return sys.Stat_t{Mode: streamLinkMode, Nlink: 1, Size: int64(len(streamTarget(fd)))}, 0
	}
	return d.dir.Lstat(name)
}

func (d devices) Readlink(name string) (string, experimentalsys.Errno) {
	if fd := stream(name); fd >= 0 {
		return streamTarget(fd), 0
	}
	if _, errno := d.dir.Stat(name); errno != 0 {
		return "", errno
	}
	return "", experimentalsys.EINVAL // not a link
}

func (d devices) Utimens(name string, _, _ int64) experimentalsys.Errno {
	if fd := stream(name); fd > 0 {
		return 0 // the guest's own pipe, as natively
	}
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
	if device(name) != "" || stream(name) >= 0 || isRoot(name) {
		return experimentalsys.EEXIST
	}
	if first, _, below := strings.Cut(name, "/"); below && (device(first) != "" || stream(first) >= 0) {
		return experimentalsys.ENOTDIR // "null/x": a device on the way, as the kernel looks it up
	}
	return experimentalsys.EACCES
}

func (devices) Chmod(string, fs.FileMode) experimentalsys.Errno { return experimentalsys.EPERM }
func (devices) Rename(string, string) experimentalsys.Errno     { return experimentalsys.EACCES }
func (devices) Rmdir(name string) experimentalsys.Errno         { return onRoot(name, experimentalsys.EACCES) }
func (devices) Unlink(name string) experimentalsys.Errno        { return onRoot(name, experimentalsys.EACCES) }

// onRoot is EROFS for the mount's own directory, whose name lies on the
// native guest's read-only root, and errno for any name in it.
func onRoot(name string, errno experimentalsys.Errno) experimentalsys.Errno {
	if isRoot(name) {
		return experimentalsys.EROFS
	}
	return errno
}
func (devices) Link(string, string) experimentalsys.Errno { return experimentalsys.EACCES }

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

// streamFile is stdout or stderr opened through /dev: its writes go where
// the guest's own stream's do, as natively a second open of the same
// pipe. A read finds the pipe empty with no more to come (EOF), where
// natively it would wait for the guest's own output; it cannot seek.
type streamFile struct {
	deviceFile
	w io.Writer
}

func openStream(w io.Writer, flag experimentalsys.Oflag) (experimentalsys.File, experimentalsys.Errno) {
	if flag&experimentalsys.O_DIRECTORY != 0 {
		return nil, experimentalsys.ENOTDIR
	}
	f, errno := (&sysfs.AdaptFS{FS: pipeNode{}}).OpenFile(".", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		return nil, errno
	}
	return &streamFile{deviceFile: deviceFile{File: f, appends: flag&experimentalsys.O_APPEND != 0}, w: w}, 0
}

func (f *streamFile) Stat() (sys.Stat_t, experimentalsys.Errno) {
	return sys.Stat_t{Mode: streamPipeMode, Nlink: 1}, 0
}

func (f *streamFile) Read([]byte) (int, experimentalsys.Errno) { return 0, 0 }

func (f *streamFile) Pread([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.ENOSYS
}

func (f *streamFile) Write(buf []byte) (int, experimentalsys.Errno) {
	n, err := f.w.Write(buf)
	if err != nil {
		return n, experimentalsys.EIO
	}
	return n, 0
}

func (f *streamFile) Pwrite([]byte, int64) (int, experimentalsys.Errno) {
	return 0, experimentalsys.ENOSYS
}

func (f *streamFile) Truncate(int64) experimentalsys.Errno { return experimentalsys.EINVAL }

// Times of the guest's own pipes are the guest's to set, as natively.
func (f *streamFile) Utimens(int64, int64) experimentalsys.Errno { return 0 }

// pipeNode is an fs.FS of one file, itself, that cannot seek: no Seek
// (wazero answers ENOSYS, having no ESPIPE; natively ESPIPE), so that
// Python's seekable() is False, as of a pipe.
type pipeNode struct{}

func (pipeNode) Open(string) (fs.File, error) { return pipeNode{}, nil }
func (pipeNode) Stat() (fs.FileInfo, error)   { return deviceInfo{}, nil }
func (pipeNode) Read([]byte) (int, error)     { return 0, io.EOF }
func (pipeNode) Close() error                 { return nil }

// Symlink finds a device's or a link's name taken (EEXIST), as Mkdir.
func (devices) Symlink(_, linkName string) experimentalsys.Errno {
	if device(linkName) != "" || stream(linkName) >= 0 || isRoot(linkName) {
		return experimentalsys.EEXIST
	}
	return experimentalsys.EACCES
}
