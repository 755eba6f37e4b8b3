package wasi

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// Under WASI os.kill(1, sig) raises sig in the guest for the signals the
// native sandbox's init forwards to it, and drops the rest
// (patches/python3.11/wasi-kill.patch): the patch's set must be the init's.
func TestKillForwardsAsTheInit(t *testing.T) {
	patch, err := Inputs.ReadFile("patches/python3.11/wasi-kill.patch")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`if signal in \{([0-9, ]+)\}:  # forwarded by init`).FindSubmatch(patch)
	if m == nil {
		t.Fatal("wasi-kill.patch has no set of the signals the init forwards")
	}
	var inPatch []int
	for _, n := range strings.Split(string(m[1]), ",") {
		v, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil {
			t.Fatal(err)
		}
		inPatch = append(inPatch, v)
	}

	init, err := os.ReadFile("../../internal/sandbox/native/containerinit/guestinit_linux.c")
	if err != nil {
		t.Fatal(err)
	}
	m = regexp.MustCompile(`static const int forwarded\[\] = \{([A-Z0-9, ]+)\};`).FindSubmatch(init)
	if m == nil {
		t.Fatal("guestinit_linux.c has no forwarded[] list")
	}
	var inInit []int
	for _, name := range strings.Split(string(m[1]), ",") {
		sig := unix.SignalNum(strings.TrimSpace(name))
		if sig == 0 {
			t.Fatalf("guestinit_linux.c forwards %q, which is no signal", name)
		}
		inInit = append(inInit, int(sig))
	}
	slices.Sort(inPatch)
	slices.Sort(inInit)
	if !slices.Equal(inPatch, inInit) {
		t.Errorf("wasi-kill.patch forwards %v for pid 1, the native init %v", inPatch, inInit)
	}
}
