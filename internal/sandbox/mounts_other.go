//go:build !linux

package sandbox

import "os"

// MountTmpfs mounts nothing off Linux (a nil unmount): the caller bounds
// dir some other way.
func MountTmpfs(string, os.FileMode, int64, int64) (unmount func() error, err error) { return nil, nil }

// DetachMountsUnder has nothing to do off Linux: nothing was mounted.
func DetachMountsUnder(string) {}
