package wazero

import (
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"testing/fstest"
)

// An image is the guest files (Config.GuestFiles) as a child process gets
// them from its parent, in one read-only buffer the child maps rather
// than reads. python.wasm and the stdlib zip reach the child as the
// build's own files, which its parent opened and checked (childWasmFD,
// childStdlibFD): the child maps them where they lie, in the page cache
// every process shares, and neither hashes nor copies them.
//
// Entries, each: mode (4 bytes), name length (4), name, data length (4),
// data; big-endian.

// writeImage writes the image of files to w entry by entry.
func writeImage(w io.Writer, files fs.FS) error {
	var head []byte
	add := func(mode fs.FileMode, name string, data []byte) error {
		head = binary.BigEndian.AppendUint32(head[:0], uint32(mode))
		head = binary.BigEndian.AppendUint32(head, uint32(len(name)))
		head = append(head, name...)
		head = binary.BigEndian.AppendUint32(head, uint32(len(data)))
		if _, err := w.Write(head); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	}
	return fs.WalkDir(files, ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || name == "." {
			return err
		}
		if d.IsDir() {
			return add(fs.ModeDir|0o555, name, nil)
		}
		data, err := fs.ReadFile(files, name)
		if err != nil {
			return err
		}
		return add(0o444, name, data)
	})
}

// decodeImage reads an image back into its files; their bytes are image's.
func decodeImage(image []byte) (fstest.MapFS, error) {
	files := fstest.MapFS{}
	next := func(n uint32) ([]byte, bool) {
		if uint64(n) > uint64(len(image)) {
			return nil, false
		}
		v := image[:n:n]
		image = image[n:]
		return v, true
	}
	u32 := func() (uint32, bool) {
		v, ok := next(4)
		if !ok {
			return 0, false
		}
		return binary.BigEndian.Uint32(v), true
	}
	for len(image) > 0 {
		mode, ok1 := u32()
		n, ok2 := u32()
		name, ok3 := next(n)
		m, ok4 := u32()
		data, ok5 := next(m)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil, errors.New("truncated image")
		}
		if !fs.ValidPath(string(name)) {
			return nil, errors.New("image entry with an invalid name")
		}
		files[string(name)] = &fstest.MapFile{Data: data, Mode: fs.FileMode(mode)}
	}
	return files, nil
}
