//go:build linux

package wazero

import "golang.org/x/sys/unix"

const auditArch = unix.AUDIT_ARCH_X86_64

// archSyscalls: amd64's legacy spellings (renameat is riscv64's one absence).
var archSyscalls = []uintptr{unix.SYS_ACCESS, unix.SYS_NEWFSTATAT, unix.SYS_EPOLL_WAIT, unix.SYS_RENAMEAT}
