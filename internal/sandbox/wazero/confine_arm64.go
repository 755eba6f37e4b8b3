//go:build linux

package wazero

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_AARCH64

// archSyscalls: arm64's spelling of fstatat, and renameat.
var archSyscalls = []uintptr{unix.SYS_FSTATAT, unix.SYS_RENAMEAT}
