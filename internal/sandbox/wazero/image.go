package wazero

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"testing/fstest"
)

// An image is what a child process needs of its parent's Load, in one
// read-only buffer the child maps rather than reads: python.wasm as Load
// checked it, the stdlib as stdlibTree unpacked it, the guest files. The
// child neither hashes nor unzips (a third of a Load's CPU, ten times that
// under the race detector), and maps the stdlib's bytes where they lie.
//
// Entries, each: tree (1 byte), mode (4 bytes), name length (4), name,
// data length (4), data; big-endian.

const (
	imageWasm   byte = iota // one entry, no name
	imageStdlib             // stdlibTree's entries
	imageGuest              // the guest files
)

// writeImage writes the image to w entry by entry: each file's bytes are
// copied once, into w (the memfd's pages), not first into a buffer grown
// by doubling.
func writeImage(w io.Writer, wasm []byte, stdlib, guestFiles fs.FS) error {
	var head []byte
	add := func(tree byte, mode fs.FileMode, name string, data []byte) error {
		head = append(head[:0], tree)
		head = binary.BigEndian.AppendUint32(head, uint32(mode))
		head = binary.BigEndian.AppendUint32(head, uint32(len(name)))
		head = append(head, name...)
		head = binary.BigEndian.AppendUint32(head, uint32(len(data)))
		if _, err := w.Write(head); err != nil {
			return err
		}
		_, err := w.Write(data)
		return err
	}
	if err := add(imageWasm, 0, "", wasm); err != nil {
		return err
	}
	for _, t := range []struct {
		tree byte
		fsys fs.FS
	}{{imageStdlib, stdlib}, {imageGuest, guestFiles}} {
		err := fs.WalkDir(t.fsys, ".", func(name string, d fs.DirEntry, err error) error {
			if err != nil || name == "." {
				return err
			}
			if d.IsDir() {
				return add(t.tree, fs.ModeDir|0o555, name, nil)
			}
			data, err := fs.ReadFile(t.fsys, name)
			if err != nil {
				return err
			}
			return add(t.tree, 0o444, name, data)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeImage splits an image into its parts; their bytes are image's.
func decodeImage(image []byte) (wasm []byte, stdlib, guestFiles fstest.MapFS, err error) {
	stdlib, guestFiles = fstest.MapFS{}, fstest.MapFS{}
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
		tree, _ := next(1)
		mode, ok1 := u32()
		n, ok2 := u32()
		name, ok3 := next(n)
		m, ok4 := u32()
		data, ok5 := next(m)
		if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
			return nil, nil, nil, errors.New("truncated image")
		}
		f := &fstest.MapFile{Data: data, Mode: fs.FileMode(mode)}
		switch tree[0] {
		case imageWasm:
			wasm = data
		case imageStdlib:
			stdlib[string(name)] = f
		case imageGuest:
			guestFiles[string(name)] = f
		default:
			return nil, nil, nil, fmt.Errorf("image tree %d", tree[0])
		}
	}
	if wasm == nil {
		return nil, nil, nil, errors.New("image without python.wasm")
	}
	return wasm, stdlib, guestFiles, nil
}
