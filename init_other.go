//go:build !linux

package apysup

// Init does nothing off Linux: there is no native backend to start
// containers (a native run is refused native_unsupported_os). A program
// calls it first all the same, so that one main serves every OS.
func Init() {}
