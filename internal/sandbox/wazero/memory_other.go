//go:build !linux

package wazero

// adviseHuge: transparent huge pages are Linux's (memory_linux.go).
func adviseHuge([]byte) {}
