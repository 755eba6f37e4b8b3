package seccomp_test

import (
	"encoding/json"
	"fmt"
	"slices"

	"github.com/apysup/apysup/internal/seccomp"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runtime-spec/specs-go"
)

// The exported profile is plain OCI JSON: here, what it says about socket.
func ExamplePolicy_OCI() {
	profile, err := seccomp.Default().OCI()
	if err != nil {
		panic(err)
	}
	var s specs.LinuxSeccomp
	if err := json.Unmarshal(profile, &s); err != nil {
		panic(err)
	}
	fmt.Println("default:", s.DefaultAction, *s.DefaultErrnoRet)
	for _, sc := range s.Syscalls {
		if slices.Contains(sc.Names, "socket") {
			a := sc.Args[0]
			fmt.Println(sc.Names, sc.Action, "if arg", a.Index, a.Op, a.Value)
		}
	}
	// Output:
	// default: SCMP_ACT_ERRNO 1
	// [socket socketpair] SCMP_ACT_ALLOW if arg 0 SCMP_CMP_EQ 1
	// [socket socketpair] SCMP_ACT_ERRNO if arg 0 SCMP_CMP_NE 1
}

// The native sandbox puts the policy in libcontainer's configuration;
// libcontainer loads it in the container's init, just before exec.
func ExamplePolicy_Libcontainer() {
	sc, err := seccomp.Default().Libcontainer()
	if err != nil {
		panic(err)
	}
	config := &configs.Config{NoNewPrivileges: true, Seccomp: sc}
	fmt.Println(config.Seccomp.DefaultAction == configs.Errno, *config.Seccomp.DefaultErrnoRet)
	// Output:
	// true 1
}

// The escape suite attempts every refused call from inside a guest.
func ExampleRefused() {
	for _, r := range seccomp.Refused()[:2] {
		fmt.Printf("%s: %s\n", r.Syscall, r.Reason)
	}
	// Output:
	// mount: changes the mount table; the guest's file system is fixed by the sandbox
	// umount2: changes the mount table; the guest's file system is fixed by the sandbox
}
