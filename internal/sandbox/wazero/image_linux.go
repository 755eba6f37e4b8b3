package wazero

import (
	"bufio"
	"errors"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// newImage writes the image of the guest files into a sealed memfd: no
// process, a child whose guest escaped included, can change what the next
// child maps.
func newImage(files fs.FS) (*os.File, error) {
	fd, err := unix.MemfdCreate("apysup-wazero-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "apysup-wazero-image")
	w := bufio.NewWriterSize(f, 64<<10)
	if err := writeImage(w, files); err != nil {
		f.Close()
		return nil, err
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// mapImage maps an image read-only; the mapping lives as long as the
// process (a child's whole life). An empty image (no guest files) maps
// to nothing.
func mapImage(fd int) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	if st.Size == 0 {
		return nil, nil
	}
	return unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_PRIVATE)
}

// mapBuildFile maps the build file open at fd read-only, for the process's
// whole life, if it is still the version its parent checked (want, the
// identity the parent's stamp or hash vouched for; readLoad refuses an
// empty one): a file written since has another ctime, and is refused.
func mapBuildFile(fd int, want fileID) ([]byte, error) {
	if id, ok := identifyFD(fd); !ok || id != want {
		return nil, errors.New("changed since its parent checked it")
	}
	return unix.Mmap(fd, 0, int(want.Size), unix.PROT_READ, unix.MAP_PRIVATE)
}
