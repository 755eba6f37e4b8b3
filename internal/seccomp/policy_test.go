package seccomp

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/opencontainers/runc/libcontainer/specconv"
	"github.com/opencontainers/runtime-spec/specs-go"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

var arches = []struct {
	goarch string
	scmp   libseccomp.ScmpArch
}{
	{"amd64", libseccomp.ArchAMD64},
	{"arm64", libseccomp.ArchARM64},
}

// mustRefuse is the contract of SPEC.md section 7 and issue 5: these calls
// are refused outright on every architecture.
var mustRefuse = []string{
	"mount", "umount2", "fsopen", "fsconfig", "fsmount", "move_mount", "open_tree", "mount_setattr",
	"unshare", "setns", "ptrace", "process_vm_readv", "process_vm_writev", "bpf",
	"keyctl", "add_key", "request_key", "perf_event_open",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "userfaultfd",
	"open_by_handle_at", "name_to_handle_at", "kexec_load", "kexec_file_load",
	"init_module", "finit_module", "delete_module", "reboot", "swapon", "swapoff", "acct",
	"clock_settime", "settimeofday", "adjtimex", "clock_adjtime", "pivot_root", "chroot", "personality",
}

// Calls that must never be allowed without an argument filter.
var mustFilter = []string{"socket", "socketpair", "clone", "ioctl", "prctl", "mknodat", "mknod"}

// sysno resolves name on arch to a real call number. libseccomp answers
// negative pseudo-numbers for calls an architecture lacks (open on arm64).
func sysno(name string, arch libseccomp.ScmpArch) (libseccomp.ScmpSyscall, bool) {
	nr, err := libseccomp.GetSyscallFromNameByArch(name, arch)
	return nr, err == nil && nr >= 0
}

func spec(t *testing.T, goarch string) *specs.LinuxSeccomp {
	t.Helper()
	s, err := forArch(goarch).spec()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestRefusedNeverAllowed(t *testing.T) {
	for _, a := range arches {
		t.Run(a.goarch, func(t *testing.T) {
			refused := map[string]bool{}
			for _, r := range refusedOn(a.goarch) {
				if r.Reason == "" {
					t.Errorf("%s: refused without a reason", r.Syscall)
				}
				refused[r.Syscall] = true
			}
			for _, name := range mustRefuse {
				if !refused[name] {
					t.Errorf("%s: missing from Refused", name)
				}
			}
			for _, sc := range spec(t, a.goarch).Syscalls {
				for _, name := range sc.Names {
					if !refused[name] {
						continue
					}
					if sc.Action != specs.ActErrno || sc.ErrnoRet == nil || *sc.ErrnoRet != uint(unix.EPERM) {
						t.Errorf("%s: refused call has a %s rule (errno %v)", name, sc.Action, sc.ErrnoRet)
					}
				}
			}
		})
	}
}

func TestNamesResolve(t *testing.T) {
	native, err := libseccomp.GetNativeArch()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range arches {
		t.Run(a.goarch, func(t *testing.T) {
			seen := map[string]bool{}
			for _, sc := range spec(t, a.goarch).Syscalls {
				for _, name := range sc.Names {
					seen[name] = true
					if _, ok := sysno(name, a.scmp); !ok {
						t.Errorf("%s does not exist on %s", name, a.goarch)
					}
					if a.scmp == native {
						if nr, err := libseccomp.GetSyscallFromName(name); err != nil || nr < 0 {
							t.Errorf("%s: %d, %v", name, nr, err)
						}
					}
				}
			}
			for _, r := range refusedOn(a.goarch) {
				if !seen[r.Syscall] {
					t.Errorf("%s: refused but not spelled out in the profile", r.Syscall)
				}
			}
		})
	}
}

// TestArchitectureSpellings checks the split between common and x86_64-only
// names: the legacy calls really are absent from arm64.
func TestArchitectureSpellings(t *testing.T) {
	for _, r := range policyRules() {
		for _, name := range r.amd64 {
			if _, ok := sysno(name, libseccomp.ArchARM64); ok {
				t.Errorf("%s exists on arm64: list it in names, not amd64", name)
			}
		}
	}
	for _, r := range refusals {
		for _, name := range r.amd64 {
			if _, ok := sysno(name, libseccomp.ArchARM64); ok {
				t.Errorf("refused %s exists on arm64: list it in names, not amd64", name)
			}
		}
	}
}

// rulesFor returns the rules naming call, in the OCI form.
func rulesFor(s *specs.LinuxSeccomp, call string) []specs.LinuxSyscall {
	var out []specs.LinuxSyscall
	for _, sc := range s.Syscalls {
		if slices.Contains(sc.Names, call) {
			out = append(out, sc)
		}
	}
	return out
}

func TestArgumentFilters(t *testing.T) {
	s := spec(t, "amd64")
	for _, name := range mustFilter {
		for _, sc := range rulesFor(s, name) {
			if sc.Action == specs.ActAllow && len(sc.Args) == 0 {
				t.Errorf("%s is allowed without an argument filter", name)
			}
		}
	}
	for _, sc := range s.Syscalls {
		for _, a := range sc.Args {
			if a.Op == specs.OpNotEqual && sc.Action == specs.ActAllow {
				// An allow on "not equal" passes every value but one, high bits included.
				t.Errorf("%v: allow rule on SCMP_CMP_NE", sc.Names)
			}
		}
	}

	type want struct {
		action specs.LinuxSeccompAction
		errno  unix.Errno
		args   []specs.LinuxSeccompArg
	}
	tests := []struct {
		call string
		want []want
	}{
		{"socket", []want{
			{specs.ActAllow, 0, []specs.LinuxSeccompArg{{Index: 0, Value: unix.AF_UNIX, Op: specs.OpEqualTo}}},
			{specs.ActErrno, unix.EAFNOSUPPORT, []specs.LinuxSeccompArg{{Index: 0, Value: unix.AF_UNIX, Op: specs.OpNotEqual}}},
		}},
		{"socketpair", []want{
			{specs.ActAllow, 0, []specs.LinuxSeccompArg{{Index: 0, Value: unix.AF_UNIX, Op: specs.OpEqualTo}}},
			{specs.ActErrno, unix.EAFNOSUPPORT, []specs.LinuxSeccompArg{{Index: 0, Value: unix.AF_UNIX, Op: specs.OpNotEqual}}},
		}},
		{"clone", []want{
			{specs.ActAllow, 0, []specs.LinuxSeccompArg{{Index: 0, Value: unix.CLONE_NEWNS | unix.CLONE_NEWUTS |
				unix.CLONE_NEWIPC | unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
				unix.CLONE_NEWCGROUP | unix.CLONE_NEWTIME, Op: specs.OpMaskedEqual}}},
		}},
		{"clone3", []want{{specs.ActErrno, unix.ENOSYS, nil}}},
		{"mknodat", []want{
			{specs.ActAllow, 0, []specs.LinuxSeccompArg{{Index: 2, Value: unix.S_IFMT, ValueTwo: unix.S_IFIFO, Op: specs.OpMaskedEqual}}},
		}},
		{"mknod", []want{
			{specs.ActAllow, 0, []specs.LinuxSeccompArg{{Index: 1, Value: unix.S_IFMT, ValueTwo: unix.S_IFIFO, Op: specs.OpMaskedEqual}}},
		}},
	}
	for _, tt := range tests {
		var got []want
		for _, sc := range rulesFor(s, tt.call) {
			w := want{action: sc.Action, args: sc.Args}
			if sc.ErrnoRet != nil {
				w.errno = unix.Errno(*sc.ErrnoRet)
			}
			got = append(got, w)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s rules:\n got %+v\nwant %+v", tt.call, got, tt.want)
		}
	}

	// ioctl and prctl: exact values only, one rule each.
	exact := func(call string, index uint) []uint64 {
		var vals []uint64
		for _, sc := range rulesFor(s, call) {
			if sc.Action != specs.ActAllow || len(sc.Args) != 1 || sc.Args[0].Index != index || sc.Args[0].Op != specs.OpEqualTo {
				t.Errorf("%s: rule %+v is not an exact match on arg %d", call, sc, index)
				continue
			}
			vals = append(vals, sc.Args[0].Value)
		}
		return vals
	}
	ioctls := exact("ioctl", 1)
	for _, v := range []uint64{unix.TIOCSTI, unix.TIOCLINUX} {
		if slices.Contains(ioctls, v) {
			t.Errorf("ioctl %#x is allowed", v)
		}
	}
	// The asm-generic numbers this package spells out must be the kernel's.
	for _, v := range []uint64{unix.TCGETS, unix.TIOCGWINSZ} {
		if !slices.Contains(ioctls, v) {
			t.Errorf("ioctl %#x (measured) is not allowed", v)
		}
	}
	prctls := exact("prctl", 0)
	for _, v := range []uint64{unix.PR_SET_DUMPABLE, unix.PR_SET_SECCOMP, unix.PR_SET_MM, unix.PR_CAP_AMBIENT,
		unix.PR_SET_PTRACER, unix.PR_SET_SECUREBITS, unix.PR_CAPBSET_DROP} {
		if slices.Contains(prctls, v) {
			t.Errorf("prctl option %d is allowed", v)
		}
	}
	if !slices.Contains(prctls, unix.PR_CAPBSET_READ) {
		t.Error("prctl(PR_CAPBSET_READ), measured at CPython start-up, is not allowed")
	}
}

func TestOCIRoundTrip(t *testing.T) {
	for _, a := range arches {
		t.Run(a.goarch, func(t *testing.T) {
			out, err := forArch(a.goarch).OCI()
			if err != nil {
				t.Fatal(err)
			}
			var s specs.LinuxSeccomp
			dec := json.NewDecoder(bytes.NewReader(out))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&s); err != nil {
				t.Fatal(err)
			}
			if s.DefaultAction != specs.ActErrno || s.DefaultErrnoRet == nil || *s.DefaultErrnoRet != uint(unix.EPERM) {
				t.Errorf("default: %s errno %v", s.DefaultAction, s.DefaultErrnoRet)
			}
			if !reflect.DeepEqual(s.Architectures, []specs.Arch{ociArches[a.goarch]}) {
				t.Errorf("architectures: %v", s.Architectures)
			}
			again, err := json.MarshalIndent(&s, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(append(again, '\n'), out) {
				t.Errorf("profile does not round-trip through specs.LinuxSeccomp")
			}
		})
	}
}

// TestLibcontainerMatchesOCI proves the two forms are one policy: runc's own
// conversion of the exported profile is exactly what Libcontainer returns.
func TestLibcontainerMatchesOCI(t *testing.T) {
	for _, a := range arches {
		t.Run(a.goarch, func(t *testing.T) {
			p := forArch(a.goarch)
			out, err := p.OCI()
			if err != nil {
				t.Fatal(err)
			}
			var s specs.LinuxSeccomp
			if err := json.Unmarshal(out, &s); err != nil {
				t.Fatal(err)
			}
			// An explicit empty set: otherwise specconv adds SPEC_ALLOW,
			// which the policy deliberately leaves out.
			s.Flags = []specs.LinuxSeccompFlag{}
			want, err := specconv.SetupSeccomp(&s)
			if err != nil {
				t.Fatal(err)
			}
			got, err := p.Libcontainer()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("Libcontainer() differs from specconv.SetupSeccomp(OCI())")
			}
			if len(got.Flags) != 0 {
				t.Errorf("flags: %v", got.Flags)
			}
		})
	}
}

var update = flag.Bool("update", false, "rewrite testdata/profile_*.json from the policy")

// TestProfileGolden keeps the exported profiles in testdata so that every
// change to the policy shows up as a readable diff in review. After a
// deliberate change: go test ./internal/seccomp -run Golden -update.
func TestProfileGolden(t *testing.T) {
	for _, a := range arches {
		t.Run(a.goarch, func(t *testing.T) {
			got, err := forArch(a.goarch).OCI()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "profile_"+a.goarch+".json")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("the policy differs from %s; review the change, then rerun with -update", path)
			}
		})
	}
}

func TestUnsupportedArch(t *testing.T) {
	p := forArch("riscv64")
	if _, err := p.OCI(); !errors.Is(err, ErrUnsupportedArch) {
		t.Errorf("OCI: %v", err)
	}
	if _, err := p.Libcontainer(); !errors.Is(err, ErrUnsupportedArch) {
		t.Errorf("Libcontainer: %v", err)
	}
}

func TestDefaultIsImmutable(t *testing.T) {
	a, err := Default().OCI()
	if err != nil {
		t.Fatal(err)
	}
	c, err := Default().Libcontainer()
	if err != nil {
		t.Fatal(err)
	}
	c.Syscalls[0].Name = "mount"
	*c.DefaultErrnoRet = 0
	Refused()[0].Syscall = "read"
	b, err := Default().OCI()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("changing a returned value changed the policy")
	}
}
