//go:build cgo && linux && amd64

package wazero

/*
#include <signal.h>
#include <stdint.h>
#include <string.h>

// The guarded reservation of the one guest this process runs, [lo, hi):
// zero when there is none.
static uintptr_t apysup_guard_lo, apysup_guard_hi;
static struct sigaction apysup_guard_prev;

// SIGSEGV's default action back: the fault, run again, ends the process.
static void apysup_guard_default(void) {
	struct sigaction dfl;
	memset(&dfl, 0, sizeof dfl);
	dfl.sa_handler = SIG_DFL;
	sigaction(SIGSEGV, &dfl, NULL);
}

// A fault inside the reservation is the guest's access out of bounds: the
// handler gives SIGSEGV its default action back and returns, the access
// runs again and the kernel ends the process with SIGSEGV, as it ends a
// native program that strays. Any other fault is the Go runtime's, whose
// handler this one chains to, as os/signal asks of a handler installed
// by C code for a synchronous signal.
static void apysup_guard_handler(int sig, siginfo_t *info, void *uctx) {
	uintptr_t addr = (uintptr_t)info->si_addr;
	uintptr_t lo = __atomic_load_n(&apysup_guard_lo, __ATOMIC_ACQUIRE);
	uintptr_t hi = __atomic_load_n(&apysup_guard_hi, __ATOMIC_ACQUIRE);
	if (info->si_code > 0 && lo != 0 && addr >= lo && addr < hi) {
		apysup_guard_default();
		return;
	}
	if (apysup_guard_prev.sa_flags & SA_SIGINFO) {
		apysup_guard_prev.sa_sigaction(sig, info, uctx);
	} else if (apysup_guard_prev.sa_handler != SIG_IGN && apysup_guard_prev.sa_handler != SIG_DFL) {
		apysup_guard_prev.sa_handler(sig);
	} else {
		// No handler before this one: the default action, even where
		// SIGSEGV was ignored (a fault that returns only faults again).
		apysup_guard_default();
	}
}

static int apysup_guard_install(void) {
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_sigaction = apysup_guard_handler;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	sigfillset(&sa.sa_mask);
	return sigaction(SIGSEGV, &sa, &apysup_guard_prev);
}

static void apysup_guard_set(uintptr_t lo, uintptr_t hi) {
	__atomic_store_n(&apysup_guard_lo, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&apysup_guard_hi, hi, __ATOMIC_RELEASE);
	__atomic_store_n(&apysup_guard_lo, lo, __ATOMIC_RELEASE);
}

// Clears the guard if it is still the reservation at lo.
static void apysup_guard_clear(uintptr_t lo) {
	uintptr_t want = lo;
	__atomic_compare_exchange_n(&apysup_guard_lo, &want, 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}
*/
import "C"

import (
	"errors"
	"sync"
	"unsafe"
)

// guardSupported: this build can run code compiled for a guarded memory
// (wazero's compiler omits bounds checks for it on amd64 only).
const guardSupported = true

var guardInstall = sync.OnceValue(func() error {
	if C.apysup_guard_install() != 0 {
		return errors.New("wazero: cannot install the guard's SIGSEGV handler")
	}
	return nil
})

// guardSet makes reservation the one whose faults end this process with
// SIGSEGV: a process runs one guarded guest at a time. The handler is
// installed the first time.
func guardSet(reservation []byte) error {
	if err := guardInstall(); err != nil {
		return err
	}
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(reservation)))
	C.apysup_guard_set(C.uintptr_t(lo), C.uintptr_t(lo+uintptr(len(reservation))))
	return nil
}

// guardClear ends reservation's guard, before it is unmapped, unless
// another reservation's has taken its place.
func guardClear(reservation []byte) {
	C.apysup_guard_clear(C.uintptr_t(uintptr(unsafe.Pointer(unsafe.SliceData(reservation)))))
}
