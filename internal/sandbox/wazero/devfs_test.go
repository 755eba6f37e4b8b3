package wazero

import (
	"bytes"
	"io/fs"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// /dev/stdin, stdout and stderr are root's links to /proc/self/fd/N, as
// natively; through them stdin is /dev/null and stdout and stderr write
// where the guest's own streams do (fs_dev_streams.py runs a guest on
// both backends).
func TestDeviceStreams(t *testing.T) {
	var stdout, stderr bytes.Buffer
	d := &nativeView{FS: newDevices(&stdout, &stderr), dev: devDev, view: devicesView}
	for fd, name := range streamNames {
		l, errno := d.Lstat(name)
		if errno != 0 || l.Mode != streamLinkMode || l.Size != int64(len(streamTarget(fd))) {
			t.Errorf("lstat %s: %v %v size %d", name, errno, l.Mode, l.Size)
		}
		if perm, o, _ := viewOf(l.Dev); o != ownerRoot || perm != 0o777 {
			t.Errorf("lstat %s: view %o owner %d", name, perm, o)
		}
		if target, errno := d.Readlink(name); errno != 0 || target != streamTarget(fd) {
			t.Errorf("readlink %s: %q %v", name, target, errno)
		}
		if _, errno := d.OpenFile(name, experimentalsys.O_WRONLY|experimentalsys.O_NOFOLLOW, 0); errno != experimentalsys.ELOOP {
			t.Errorf("open %s O_NOFOLLOW: %v, want ELOOP", name, errno)
		}
		if errno := d.Mkdir(name, 0o755); errno != experimentalsys.EEXIST {
			t.Errorf("mkdir %s: %v, want EEXIST", name, errno)
		}
		if errno := d.Symlink("null", name); errno != experimentalsys.EEXIST {
			t.Errorf("symlink over %s: %v, want EEXIST", name, errno)
		}
		if errno := d.Unlink(name); errno != experimentalsys.EACCES {
			t.Errorf("unlink %s: %v, want EACCES", name, errno)
		}
	}
	if st, errno := d.Stat("stdin"); errno != 0 || st.Mode != deviceMode || (st.Dev>>12)&0xf != 3 {
		t.Errorf("stat stdin: %v %v, want /dev/null's", errno, st.Mode)
	}
	for _, name := range []string{"stdout", "stderr"} {
		st, errno := d.Stat(name)
		if perm, o, _ := viewOf(st.Dev); errno != 0 || st.Mode.Type() != fs.ModeNamedPipe || perm != 0o600 || o != ownerGuest {
			t.Errorf("stat %s: %v %v %o owner %d, want the guest's pipe", name, errno, st.Mode, perm, o)
		}
	}

	in, errno := d.OpenFile("stdin", experimentalsys.O_RDONLY, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	if n, errno := in.Read(make([]byte, 8)); n != 0 || errno != 0 {
		t.Errorf("read stdin: %d %v, want /dev/null's EOF", n, errno)
	}
	for _, tc := range []struct {
		name string
		buf  *bytes.Buffer
	}{{"stdout", &stdout}, {"stderr", &stderr}} {
		f, errno := d.OpenFile(tc.name, experimentalsys.O_WRONLY|experimentalsys.O_APPEND, 0)
		if errno != 0 {
			t.Fatal(errno)
		}
		if n, errno := f.Write([]byte("to " + tc.name)); n != len("to "+tc.name) || errno != 0 {
			t.Errorf("write %s: %d %v", tc.name, n, errno)
		}
		if got := tc.buf.String(); got != "to "+tc.name {
			t.Errorf("%s received %q", tc.name, got)
		}
		if _, errno := f.Seek(0, 0); errno != experimentalsys.ENOSYS {
			t.Errorf("seek %s: %v, want ENOSYS (the guest's ESPIPE)", tc.name, errno)
		}
		if st, errno := f.Stat(); errno != 0 || st.Mode.Type() != fs.ModeNamedPipe {
			t.Errorf("fstat %s: %v %v", tc.name, errno, st.Mode)
		}
		if errno := f.Close(); errno != 0 {
			t.Errorf("close %s: %v", tc.name, errno)
		}
	}
	if _, errno := d.OpenFile("stdout", experimentalsys.O_DIRECTORY, 0); errno != experimentalsys.ENOTDIR {
		t.Errorf("open stdout O_DIRECTORY: %v, want ENOTDIR", errno)
	}
}

// viewOf unpacks viewDev's permission bits, owner and device number.
func viewOf(dev uint64) (fs.FileMode, owner, uint16) {
	return fs.FileMode(dev & 0o777), owner(dev >> 16), uint16(dev >> 32)
}
