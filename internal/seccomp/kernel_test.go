package seccomp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/apysup/apysup/internal/testenv"
	"github.com/opencontainers/runc/libcontainer/configs"
	lcseccomp "github.com/opencontainers/runc/libcontainer/seccomp"
	libseccomp "github.com/seccomp/libseccomp-golang"
	"golang.org/x/sys/unix"
)

// The kernel tests re-execute this test binary as a helper that loads the
// policy into itself (no_new_privs, then the filter, on one locked thread)
// and then either makes raw system calls and reports their errnos, or execs
// /usr/bin/python3.11. Two loaders build the filter: libseccomp-golang
// directly from Libcontainer()'s rules, and runc's own InitSeccomp (the code
// the sandbox runs; compiled in only with -tags seccomp).

const (
	envHelper = "APYSUP_SECCOMP_HELPER" // "probe" or "exec"
	envLoader = "APYSUP_SECCOMP_LOADER" // "libseccomp", "libcontainer" or "none"
	envExec   = "APYSUP_SECCOMP_EXEC"   // JSON argv for "exec"
	envDir    = "APYSUP_SECCOMP_DIR"    // scratch directory for "probe"
)

const python = "/usr/bin/python3.11"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelper); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	runtime.LockOSThread() // the filter, the probes and exec stay on one thread
	var probes []probe
	if mode == "probe" {
		var err error
		if probes, err = makeProbes(os.Getenv(envDir)); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
	}
	if err := load(os.Getenv(envLoader)); err != nil {
		fmt.Fprintln(os.Stderr, "helper: load:", err)
		return 2
	}
	switch mode {
	case "probe":
		results := []probeResult{}
		for _, p := range probes {
			results = append(results, probeResult{Name: p.name, Want: int(p.want), Got: int(p.call())})
		}
		if err := json.NewEncoder(os.Stdout).Encode(results); err != nil {
			return 2
		}
		return 0
	case "exec":
		var argv []string
		if err := json.Unmarshal([]byte(os.Getenv(envExec)), &argv); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		env := []string{"PATH=/usr/bin:/bin", "LC_ALL=C.UTF-8", "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.Getenv("TMPDIR")}
		err := syscall.Exec(argv[0], argv, env)
		fmt.Fprintln(os.Stderr, "helper: exec:", err)
		return 2
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}

func load(loader string) error {
	if loader == "none" {
		return nil
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return err
	}
	c, err := Default().Libcontainer()
	if err != nil {
		return err
	}
	switch loader {
	case "libcontainer":
		_, err := lcseccomp.InitSeccomp(c)
		return err
	case "libseccomp":
		return loadLibseccomp(c)
	}
	return fmt.Errorf("unknown loader %q", loader)
}

var libseccompOps = map[configs.Operator]libseccomp.ScmpCompareOp{
	configs.EqualTo:              libseccomp.CompareEqual,
	configs.NotEqualTo:           libseccomp.CompareNotEqual,
	configs.GreaterThan:          libseccomp.CompareGreater,
	configs.GreaterThanOrEqualTo: libseccomp.CompareGreaterEqual,
	configs.LessThan:             libseccomp.CompareLess,
	configs.LessThanOrEqualTo:    libseccomp.CompareLessOrEqual,
	configs.MaskEqualTo:          libseccomp.CompareMaskedEqual,
}

// loadLibseccomp builds and loads the filter with libseccomp-golang alone,
// with the same reading of the rules as runc: rules whose action is the
// default are redundant, the conditions of one rule are ANDed.
func loadLibseccomp(c *configs.Seccomp) error {
	def := libseccomp.ActErrno.SetReturnCode(int16(*c.DefaultErrnoRet))
	f, err := libseccomp.NewFilter(def)
	if err != nil {
		return err
	}
	defer f.Release()
	for _, sc := range c.Syscalls {
		act := libseccomp.ActAllow
		if sc.Action == configs.Errno {
			act = libseccomp.ActErrno.SetReturnCode(int16(*sc.ErrnoRet))
		} else if sc.Action != configs.Allow {
			return fmt.Errorf("%s: unexpected action %v", sc.Name, sc.Action)
		}
		if act == def {
			continue
		}
		nr, err := libseccomp.GetSyscallFromName(sc.Name)
		if err != nil {
			return fmt.Errorf("%s: %w", sc.Name, err)
		}
		var conds []libseccomp.ScmpCondition
		for _, a := range sc.Args {
			cond, err := libseccomp.MakeCondition(a.Index, libseccompOps[a.Op], a.Value, a.ValueTwo)
			if err != nil {
				return fmt.Errorf("%s: %w", sc.Name, err)
			}
			conds = append(conds, cond)
		}
		if len(conds) == 0 {
			err = f.AddRule(nr, act)
		} else {
			err = f.AddRuleConditional(nr, act, conds)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sc.Name, err)
		}
	}
	return f.Load()
}

// probeResult is what the helper reports for one probe.
type probeResult struct {
	Name      string
	Want, Got int // errnos, 0 for success
}

// probe is one raw system call; call returns its errno (0 on success). want
// is the errno under the filter: the filter's own answer for a refusal, the
// kernel's answer (the same without the filter) for a call let through.
type probe struct {
	name string
	want unix.Errno
	call func() unix.Errno
}

// filterErrnos are the answers only the filter gives in these probes.
var filterErrnos = []unix.Errno{unix.EPERM, unix.EAFNOSUPPORT, unix.ENOSYS}

func raw(nr uintptr, args ...uintptr) func() unix.Errno {
	var a [6]uintptr
	copy(a[:], args)
	return func() unix.Errno {
		r, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
		if e == 0 && (nr == unix.SYS_SOCKET || nr == unix.SYS_OPENAT) {
			unix.Close(int(r))
		}
		return e
	}
}

func ptr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// makeProbes prepares every call before the filter is loaded (name lookups,
// strings, descriptors); dir is a scratch directory.
func makeProbes(dir string) ([]probe, error) {
	var rfd [2]int
	if err := unix.Pipe2(rfd[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	fifo, err := unix.BytePtrFromString(filepath.Join(dir, "fifo"))
	if err != nil {
		return nil, err
	}
	dev, err := unix.BytePtrFromString(filepath.Join(dir, "dev"))
	if err != nil {
		return nil, err
	}
	var sv [2]int32
	fdcwd := unix.AT_FDCWD
	atFDCWD := uintptr(fdcwd)
	pipe := uintptr(rfd[0])
	const thread = unix.CLONE_THREAD // without CLONE_SIGHAND: EINVAL once past the filter, nothing created
	ps := []probe{
		{"socket(AF_UNIX)", 0, raw(unix.SYS_SOCKET, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC)},
		{"socket(AF_INET)", unix.EAFNOSUPPORT, raw(unix.SYS_SOCKET, unix.AF_INET, unix.SOCK_STREAM)},
		{"socket(AF_INET6)", unix.EAFNOSUPPORT, raw(unix.SYS_SOCKET, unix.AF_INET6, unix.SOCK_DGRAM)},
		{"socket(AF_NETLINK)", unix.EAFNOSUPPORT, raw(unix.SYS_SOCKET, unix.AF_NETLINK, unix.SOCK_RAW)},
		{"socket(AF_PACKET)", unix.EAFNOSUPPORT, raw(unix.SYS_SOCKET, unix.AF_PACKET, unix.SOCK_RAW)},
		{"socket(AF_INET|1<<32)", unix.EAFNOSUPPORT, raw(unix.SYS_SOCKET, 1<<32|unix.AF_INET, unix.SOCK_STREAM)},
		{"socket(AF_UNIX|1<<32)", unix.EAFNOSUPPORT, raw(unix.SYS_SOCKET, 1<<32|unix.AF_UNIX, unix.SOCK_STREAM)},
		{"socketpair(AF_UNIX)", 0, raw(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, ptr(&sv))},
		{"socketpair(AF_INET)", unix.EAFNOSUPPORT, raw(unix.SYS_SOCKETPAIR, unix.AF_INET, unix.SOCK_STREAM, 0, ptr(&sv))},
		{"clone3", unix.ENOSYS, raw(unix.SYS_CLONE3, 0, 0)},
		{"clone(CLONE_THREAD)", unix.EINVAL, raw(unix.SYS_CLONE, thread)},
		{"ioctl(FIOCLEX)", 0, raw(unix.SYS_IOCTL, pipe, ioctlFIOCLEX)},
		{"ioctl(TCGETS)", unix.ENOTTY, raw(unix.SYS_IOCTL, pipe, ioctlTCGETS, ptr(new(unix.Termios)))},
		{"ioctl(TIOCSTI)", unix.EPERM, raw(unix.SYS_IOCTL, pipe, unix.TIOCSTI, ptr(new(byte)))},
		{"ioctl(TIOCLINUX)", unix.EPERM, raw(unix.SYS_IOCTL, pipe, unix.TIOCLINUX, ptr(new(byte)))},
		{"ioctl(TIOCSTI|1<<32)", unix.EPERM, raw(unix.SYS_IOCTL, pipe, 1<<32|unix.TIOCSTI, ptr(new(byte)))},
		{"ioctl(FIOCLEX|1<<32)", unix.EPERM, raw(unix.SYS_IOCTL, pipe, 1<<32|ioctlFIOCLEX)},
		{"prctl(PR_GET_DUMPABLE)", 0, raw(unix.SYS_PRCTL, unix.PR_GET_DUMPABLE)},
		{"prctl(PR_SET_NAME)", 0, raw(unix.SYS_PRCTL, unix.PR_SET_NAME, ptr(fifo))},
		{"prctl(PR_SET_DUMPABLE)", unix.EPERM, raw(unix.SYS_PRCTL, unix.PR_SET_DUMPABLE, 1)},
		{"prctl(PR_SET_SECCOMP)", unix.EPERM, raw(unix.SYS_PRCTL, unix.PR_SET_SECCOMP, 0)},
		{"prctl(PR_CAP_AMBIENT)", unix.EPERM, raw(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL)},
		{"mknodat(S_IFIFO)", 0, raw(unix.SYS_MKNODAT, atFDCWD, ptr(fifo), unix.S_IFIFO|0o600)},
		{"mknodat(S_IFCHR)", unix.EPERM, raw(unix.SYS_MKNODAT, atFDCWD, ptr(dev), unix.S_IFCHR|0o600, uintptr(unix.Mkdev(1, 3)))},
		{"setuid(0)", unix.EPERM, raw(unix.SYS_SETUID, 0)},
		{"personality(query)", unix.EPERM, raw(unix.SYS_PERSONALITY, 0xffffffff)},
	}
	for _, flag := range []uintptr{unix.CLONE_NEWNS, unix.CLONE_NEWUTS, unix.CLONE_NEWIPC, unix.CLONE_NEWUSER,
		unix.CLONE_NEWPID, unix.CLONE_NEWNET, unix.CLONE_NEWCGROUP, unix.CLONE_NEWTIME} {
		ps = append(ps, probe{fmt.Sprintf("clone(CLONE_THREAD|%#x)", flag), unix.EPERM, raw(unix.SYS_CLONE, thread|flag)})
	}
	// Every refused call, with arguments the kernel would reject if the
	// filter let it through (all ones: bad pointers, flags and descriptors).
	// personality gets a real persona instead: all ones is its query.
	const bad = ^uintptr(0)
	for _, r := range Refused() {
		nr, err := libseccomp.GetSyscallFromName(r.Syscall)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.Syscall, err)
		}
		args := []uintptr{bad, bad, bad, bad, bad, bad}
		if r.Syscall == "personality" {
			args = []uintptr{0x0008} // PER_LINUX32
		}
		ps = append(ps, probe{r.Syscall, unix.EPERM, raw(uintptr(nr), args...)})
	}
	return ps, nil
}

func seccompAvailable() bool {
	b, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	return err == nil && bytes.Contains(b, []byte("errno"))
}

func needKernel(t *testing.T, loader string) {
	t.Helper()
	testenv.Need(t, seccompAvailable(), "seccomp filters with SECCOMP_RET_ERRNO (/proc/sys/kernel/seccomp/actions_avail)")
	if loader == "libcontainer" {
		testenv.Need(t, lcseccomp.Enabled, "runc's seccomp support: go test -tags seccomp")
	}
}

// runHelper re-executes the test binary as a helper and returns its stdout.
func runHelper(t *testing.T, mode, loader string, env ...string) ([]byte, error) {
	t.Helper()
	return runWrapped(t, nil, mode, loader, env...)
}

// runWrapped runs the helper under wrapper (a command prefix such as strace).
func runWrapped(t *testing.T, wrapper []string, mode, loader string, env ...string) ([]byte, error) {
	t.Helper()
	argv := append(append([]string(nil), wrapper...), os.Args[0], "-test.run=^$")
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append([]string{envHelper + "=" + mode, envLoader + "=" + loader,
		"HOME=" + t.TempDir(), "TMPDIR=" + t.TempDir()}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if err != nil {
		err = fmt.Errorf("%w\nstdout:\n%s\nstderr:\n%s", err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes(), err
}

func pythonArgv(t *testing.T, script string) string {
	t.Helper()
	return execArgv(t, python, "-I", testdataPath(t, script))
}

// execArgv is the helper's environment entry for exec mode.
func execArgv(t *testing.T, argv ...string) string {
	t.Helper()
	b, err := json.Marshal(argv)
	if err != nil {
		t.Fatal(err)
	}
	return envExec + "=" + string(b)
}

func testdataPath(t *testing.T, name string) string {
	t.Helper()
	path, err := filepath.Abs(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return path
}

func probeResults(t *testing.T, loader string) []probeResult {
	t.Helper()
	out, err := runHelper(t, "probe", loader, envDir+"="+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	var got []probeResult
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return got
}

func TestKernelRefusesAndAllows(t *testing.T) {
	for _, loader := range []string{"libseccomp", "libcontainer"} {
		t.Run(loader, func(t *testing.T) {
			needKernel(t, loader)
			t.Parallel()
			control := probeResults(t, "none")
			got := probeResults(t, loader)
			if len(got) != len(control) || len(got) < len(Refused()) {
				t.Fatalf("%d probes under the filter, %d without", len(got), len(control))
			}
			for i, p := range got {
				if p.Got != p.Want {
					t.Errorf("%s: errno %d (%v), want %d (%v)", p.Name, p.Got, unix.Errno(p.Got), p.Want, unix.Errno(p.Want))
				}
				refusal := slices.Contains(filterErrnos, unix.Errno(p.Want))
				switch c := control[i].Got; {
				case !refusal && c != p.Want:
					t.Errorf("%s: errno %v without the filter, want %v (the kernel's answer)", p.Name, unix.Errno(c), unix.Errno(p.Want))
				case refusal && c == p.Want:
					// Proves nothing on this host, but is not wrong.
					t.Logf("%s: fails with %v without the filter too", p.Name, unix.Errno(c))
				}
			}
		})
	}
}

// TestPythonUnderFilter runs CPython under the filter, as the sandbox will:
// the broad stdlib workload must pass, and refused operations must surface
// as Python exceptions with the documented errnos.
func TestPythonUnderFilter(t *testing.T) {
	_, err := os.Stat(python)
	testenv.Need(t, err == nil, python+" (apt-get install python3.11)")
	scripts := []string{"workload.py", "refusals.py"}
	for _, loader := range []string{"libseccomp", "libcontainer"} {
		for _, script := range scripts {
			t.Run(loader+"/"+strings.TrimSuffix(script, ".py"), func(t *testing.T) {
				needKernel(t, loader)
				t.Parallel()
				out, err := runHelper(t, "exec", loader, pythonArgv(t, script))
				if err != nil {
					var ee *exec.ExitError
					if errors.As(err, &ee) {
						t.Fatalf("python exited %d under the filter: %v", ee.ExitCode(), err)
					}
					t.Fatal(err)
				}
				if !bytes.HasSuffix(out, []byte(" ok\n")) {
					t.Errorf("output: %q", out)
				}
			})
		}
	}
}

// failedCall matches a failed call in `strace -f -Z` output, resumed or not.
var failedCall = regexp.MustCompile(`^\d+ +(?:<\.\.\. )?([a-z0-9_]+)[( ].*= -1 (E[A-Z0-9]+)`)

// TestWorkloadMeetsNoRefusal traces the workloads under the filter: the
// stdlib workload (python3.11) and the command-line tools a guest script
// commonly runs (tools.sh: tar, gzip, xz, bzip2, zip, cp, sort, sqlite3,
// git, ...). Passing is not enough, no call may have been refused on the
// way (a program silently falling back from EPERM would hide a gap in the
// allowlist). clone3's ENOSYS is the one refusal by design.
func TestWorkloadMeetsNoRefusal(t *testing.T) {
	_, err := os.Stat(python)
	testenv.Need(t, err == nil, python+" (apt-get install python3.11)")
	needKernel(t, "libseccomp")
	strace, err := exec.LookPath("strace")
	testenv.Need(t, err == nil && exec.Command(strace, "-qq", "-o", os.DevNull, "true").Run() == nil,
		"a working strace (apt-get install strace; ptrace allowed)")
	for _, tool := range []string{"tar", "gzip", "xz", "bzip2", "zip", "unzip", "sqlite3", "git"} {
		_, err := exec.LookPath(tool)
		testenv.Need(t, err == nil, tool+" (make deps installs it)")
	}
	workloads := map[string]string{
		"python": pythonArgv(t, "workload.py"),
		"tools":  execArgv(t, "/bin/sh", testdataPath(t, "tools.sh")),
	}
	for name, argv := range workloads {
		t.Run(name, func(t *testing.T) {
			trace := filepath.Join(t.TempDir(), "trace")
			if out, err := runWrapped(t, []string{strace, "-f", "-qq", "-Z", "-o", trace}, "exec", "libseccomp", argv); err != nil {
				t.Errorf("%v\n%s", err, out) // and say which calls were refused
			}
			b, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			clone3 := 0
			for _, line := range strings.Split(string(b), "\n") {
				m := failedCall.FindStringSubmatch(line)
				if m == nil {
					continue
				}
				switch call, errno := m[1], m[2]; {
				case call == "clone3" && errno == "ENOSYS":
					clone3++
				case errno == "EPERM" || errno == "EAFNOSUPPORT" || errno == "ENOSYS":
					t.Errorf("refused during the workload: %s", line)
				}
			}
			if clone3 == 0 {
				t.Error("no clone3 attempt seen: is glibc's fall-back to clone still exercised?")
			}
		})
	}
}

// TestCompat32Killed: the policy names x86_64 only, so an i386 call made
// with int 0x80 (numbered differently, unchecked by any x86_64 rule) hits
// libseccomp's bad-architecture action and the thread dies with SIGSYS.
// The same call is made without a filter first: on a host that never
// delivers int 0x80 (a hypervisor faulting it for everyone) there is no
// entry to filter, and the test asserts that the call never ran.
func TestCompat32Killed(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("int 0x80 exists on x86_64 only")
	}
	_, err := os.Stat(python)
	testenv.Need(t, err == nil, python+" (apt-get install python3.11)")
	argv := pythonArgv(t, "compat32.py")
	unconfined := compat32Ending(t, "none", argv)
	for _, loader := range []string{"libseccomp", "libcontainer"} {
		t.Run(loader, func(t *testing.T) {
			needKernel(t, loader)
			t.Parallel()
			testenv.ExpectFiltered(t, "i386 unshare", unconfined, compat32Ending(t, loader, argv))
		})
	}
}

// compat32Ending runs compat32.py under loader: "ok:<result>" when the call
// returned, or the name of the signal that killed the helper.
func compat32Ending(t *testing.T, loader, argv string) string {
	t.Helper()
	out, err := runHelper(t, "exec", loader, argv)
	if err == nil {
		result, ok := bytes.CutPrefix(bytes.TrimSpace(out), []byte("int 0x80 returned "))
		if !ok {
			t.Fatalf("compat32.py under %s: %q", loader, out)
		}
		return "ok:" + string(result)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return unix.SignalName(ws.Signal())
		}
	}
	t.Fatalf("compat32.py under %s: %v", loader, err)
	return ""
}
