//go:build !linux

package doctor

import (
	"context"
	"runtime"
	"time"
)

// Run reports the check that matters most off Linux, that the native
// backend needs Linux's namespaces, cgroups and seccomp and so is
// unavailable, and the wazero the wazero backend runs on.
func Run(context.Context) Report { return Quick() }

// Quick is Run: off Linux there is nothing to probe.
func Quick() Report {
	return report([]Check{unsupportedOS(), checkWazeroRuntime()}, time.Now())
}

func unsupportedOS() Check {
	return fail("os", CodeUnsupportedOS, "the native backend needs Linux; this is "+runtime.GOOS,
		"use the wazero backend here, or run apysup on Linux for native confinement")
}
