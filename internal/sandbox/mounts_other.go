//go:build !linux

package sandbox

import "os"

// MountTmpfs mounts nothing off Linux: the caller bounds dir some other way.
func MountTmpfs(string, os.FileMode, int64, int64) (mounted bool, err error) { return false, nil }

// DetachMountsUnder has nothing to do off Linux: nothing was mounted.
func DetachMountsUnder(string) {}
