package wazero

import (
	"bufio"
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// newImage writes the image into a sealed memfd: no process, a child whose
// guest escaped included, can change what the next child maps.
func newImage(wasm []byte, stdlib, guestFiles fs.FS) (*os.File, error) {
	fd, err := unix.MemfdCreate("apysup-wazero-image", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), "apysup-wazero-image")
	w := bufio.NewWriterSize(f, 1<<20) // larger writes (python.wasm) go straight through
	if err := writeImage(w, wasm, stdlib, guestFiles); err != nil {
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
// process (a child's whole life).
func mapImage(fd int) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, err
	}
	return unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_PRIVATE)
}
