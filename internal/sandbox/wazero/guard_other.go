//go:build !(cgo && linux && amd64)

package wazero

import "errors"

// guardSupported: this build compiles python.wasm with bounds checks.
const guardSupported = false

func guardSet(reservation []byte) error {
	if reservation != nil {
		return errors.New("wazero: no guarded memory on this platform")
	}
	return nil
}
