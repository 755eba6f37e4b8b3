//go:build !linux

package wazero

import (
	"errors"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// resolvesBeneath: only Linux's openat2 resolves a path beneath a directory
// in the kernel (hostdir_linux.go); resolving symlinks by hand would race a
// host that changes the tree. Elsewhere the guest gets no host zoneinfo,
// as on a host without one.
const resolvesBeneath = false

// hostDir is never opened off Linux.
type hostDir struct{}

func openHostDir(string) (*hostDir, error) {
	return nil, errors.New("no beneath-resolution of host paths on this OS")
}

func (*hostDir) Close() error { return nil }

func (*hostDir) FS() experimentalsys.FS { return nil }
