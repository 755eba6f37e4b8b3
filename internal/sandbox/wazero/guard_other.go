//go:build !(cgo && linux && amd64)

package wazero

import "errors"

// guardSupported: this build compiles python.wasm with bounds checks.
const guardSupported = false

func guardSet([]byte) error { return errors.New("wazero: no guarded memory on this platform") }

func guardClear([]byte) {}
