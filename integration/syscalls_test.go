package integration

import (
	"testing"

	libseccomp "github.com/seccomp/libseccomp-golang"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/seccomp"
)

// TestRefusedSyscalls makes every call of seccomp.Refused() from inside a
// real guest with ctypes (libc.syscall), plus the argument filters (clone
// and unshare with namespace flags, device nodes, TIOCSTI, prctl), and
// checks each failed with the errno the policy gives.
func TestRefusedSyscalls(t *testing.T) {
	t.Parallel()
	need(t)
	want := map[string]string{
		"clone3":             "ENOSYS", // so that glibc falls back to clone
		"mknod:char":         "EPERM",
		"mknod:block":        "EPERM",
		"ioctl:TIOCSTI":      "EPERM",
		"prctl:CAPBSET_DROP": "EPERM",
		"prctl:SET_MM":       "EPERM",
		"setuid:0":           "EPERM",
		"chroot":             "EPERM",
		"setuid:mount":       "", // util-linux's own exit statuses
		"setuid:umount":      "",
	}
	for _, ns := range []string{"NEWUSER", "NEWNS", "NEWPID", "NEWNET", "NEWUTS", "NEWIPC", "NEWCGROUP", "NEWTIME"} {
		want["clone:"+ns] = "EPERM"
		want["unshare:"+ns] = "EPERM"
	}
	var args []string
	for _, name := range []string{"clone", "clone3", "unshare", "prctl"} {
		args = append(args, "nr:"+name+"="+syscallNumber(t, name))
	}
	refused := seccomp.Refused()
	if len(refused) < 40 {
		t.Fatalf("seccomp.Refused() lists only %d calls", len(refused))
	}
	for _, r := range refused {
		args = append(args, "refuse:"+r.Syscall+"="+syscallNumber(t, r.Syscall))
		// The policy names every refusal with EPERM (seccomp.Refused's
		// contract), below runc's ENOSYS stub.
		want["syscall:"+r.Syscall] = "EPERM"
	}
	res := runGuest(t, "syscalls.py", sandbox.Limits{}, args...)
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	m.expect(t, want, "fork", "socketpair:AF_UNIX", "mkfifo")
	var st map[string]string
	m.infoAs(t, "status", &st)
	if st["Seccomp"] != "2" || st["NoNewPrivs"] != "1" {
		t.Errorf("guest status %v: want a seccomp filter (2) and no_new_privs", st)
	}
	var nosuid map[string]bool
	m.infoAs(t, "nosuid", &nosuid)
	for _, d := range []string{"/usr", "/opt/apysup", "/tmp", "/workspace", "/run/apysup"} {
		if !nosuid[d] {
			t.Errorf("%s is not mounted nosuid (%v)", d, nosuid)
		}
	}
	for _, k := range []string{"CapEff", "CapBnd", "CapPrm"} {
		if st[k] != "0000000000000000" {
			t.Errorf("%s = %s: want no capability", k, st[k])
		}
	}
}

func syscallNumber(t *testing.T, name string) string {
	t.Helper()
	nr, err := libseccomp.GetSyscallFromName(name)
	if err != nil {
		t.Fatalf("syscall %s: %v", name, err)
	}
	return itoa(int(nr))
}
