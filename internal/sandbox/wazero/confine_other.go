//go:build linux && !amd64 && !arm64

package wazero

// auditArch 0: no filter for this architecture; confineChild refuses,
// and the child reports a setup failure rather than run unconfined.
const auditArch = 0

var archSyscalls []uintptr
