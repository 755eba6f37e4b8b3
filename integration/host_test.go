package integration

import (
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/native/containerinit"
)

// guestDevices are the only device nodes a guest may have, by type and number.
var guestDevices = map[string]string{
	"/dev/null": "c:1:3", "/dev/zero": "c:1:5", "/dev/full": "c:1:7", "/dev/random": "c:1:8", "/dev/urandom": "c:1:9",
}

// Other /dev entries the runtime may add: the standard symlinks and empty
// mount points (never a device node).
var guestDevOthers = map[string]string{
	"/dev/fd": "l", "/dev/stdin": "l", "/dev/stdout": "l", "/dev/stderr": "l", "/dev/ptmx": "l", "/dev/core": "l",
	"/dev/pts": "d", "/dev/shm": "d", "/dev/mqueue": "d",
}

// guestEnvKeys are all the environment a guest may have: the runner's
// documented environment, plus LC_CTYPE, which CPython sets itself when
// it coerces the C locale.
var guestEnvKeys = []string{"PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONUTF8", "PATH", "HOME", "LANG", "LC_CTYPE"}

// TestHostIsInvisible: /proc shows only the guest's own processes (pid 1
// is the guest init, the namespace's init; the script is its child), host
// pids cannot be signalled and the host process survives, no host
// environment variable and no inherited descriptor reaches the guest, and
// /dev holds only the five harmless devices.
func TestHostIsInvisible(t *testing.T) {
	t.Parallel()
	need(t)
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		sleeper.Process.Kill()
		sleeper.Wait()
	}()
	hostPids := []int{os.Getpid(), os.Getppid(), sleeper.Process.Pid}
	// A SysV segment of the host: the guest's IPC namespace has its own.
	shmKey := int(time.Now().UnixNano()&0x3fffffff) | 1
	shm, err := unix.SysvShmGet(shmKey, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o666)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.SysvShmCtl(shm, unix.IPC_RMID, nil)
	args := []string{strconv.Itoa(shmKey)}
	for _, p := range hostPids {
		args = append(args, strconv.Itoa(p))
	}
	res := runGuest(t, "host.py", sandbox.Limits{}, args...)
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the host process the guest tried to kill is gone: %v", err)
	}
	want := map[string]string{"kill:all": "ESRCH", "setpriority:host": "ESRCH|EPERM",
		"ipc:host-shm": "EPERM|ENOENT", // SysV calls are not on the allowlist; the namespace has none anyway
		// A priority can be lowered (the controls below), not raised:
		// glibc's nice reports setpriority's EACCES as EPERM; CPython's
		// setrlimit raises ValueError for EPERM.
		"nice:raise": "EPERM", "setpriority:raise": "EACCES", "setpriority:user": "EACCES",
		"sched_setscheduler:fifo": "EPERM", "sched_setscheduler:rr": "EPERM", "sched_setparam:rt": "EINVAL|EPERM",
		"setrlimit:rtprio": "ValueError", "setrlimit:nice": "ValueError"}
	for _, p := range []string{"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi", "/proc/interrupts"} {
		want["masked:"+p] = "empty"
		if _, err := os.Stat(p); err != nil {
			want["masked:"+p] = "empty|ENOENT" // not on this kernel
		}
	}
	for i := range hostPids {
		want[fmt.Sprintf("kill:host%d", i)] = "ESRCH"
		want[fmt.Sprintf("kill0:host%d", i)] = "ESRCH"
		want[fmt.Sprintf("proc:host%d", i)] = "ENOENT"
	}
	for _, p := range []string{"/dev/mem", "/dev/kmem", "/dev/port", "/dev/kmsg", "/dev/sda", "/dev/vda", "/dev/nvme0n1",
		"/dev/tty", "/dev/console", "/dev/net/tun", "/dev/fuse", "/dev/kvm", "/dev/loop0", "/dev/loop-control", "/dev/vsock"} {
		want["open:"+p] = "ENOENT"
	}
	m := parseMarkers(t, res)
	m.expect(t, want, "read:/dev/urandom", "write:/dev/null", "nice:lower", "sched_setaffinity:own",
		"sched_setscheduler:batch")
	var schedLimits [][2]uint64
	m.infoAs(t, "sched_rlimits", &schedLimits)
	if !slices.Equal(schedLimits, [][2]uint64{{0, 0}, {0, 0}}) {
		t.Errorf("RLIMIT_NICE and RLIMIT_RTPRIO in the guest: %v, want (0, 0) each", schedLimits)
	}

	// Processes.
	var procs map[string]string
	var self struct {
		Pid, Ppid, Child, UID int
		UIDMap                []string `json:"uid_map"`
		Pid1                  []string
	}
	m.infoAs(t, "procs", &procs)
	m.infoAs(t, "self", &self)
	// The guest init is pid 1 (its namespace's init, ppid 0 seen from
	// inside) and runs the runner, which runs the script, as its child.
	if self.Pid <= 1 || self.Ppid != 1 || self.UID != 1000 {
		t.Errorf("guest identity %+v: want a child of pid 1 (the guest init, its namespace's init), uid 1000", self)
	}
	initArgv := containerinit.GuestInitArgv(sandbox.GuestOutDir+"/"+sandbox.OutcomeFile, nil)
	if !slices.Equal(self.Pid1, initArgv) {
		t.Errorf("pid 1 of the guest runs %v, want the guest init %v", self.Pid1, initArgv)
	}
	if len(procs) != 3 || procs["1"] != initArgv[0] || procs[strconv.Itoa(self.Pid)] != sandbox.GuestPython ||
		procs[strconv.Itoa(self.Child)] != sandbox.GuestPython || self.Child == self.Pid || self.Child <= 1 {
		t.Errorf("the guest's /proc lists %v; want only the guest init (1), the script (%d) and its child (%d)", procs, self.Pid, self.Child)
	}
	if len(self.UIDMap) != 6 || self.UIDMap[0] != "0" || self.UIDMap[3] != "1000" {
		t.Errorf("uid_map %v: want container root and 1000, one id each", self.UIDMap)
	} else if h, _ := strconv.Atoi(self.UIDMap[4]); h < 1000 {
		t.Errorf("uid 1000 maps to host uid %d, a real user's", h)
	}

	// Environment.
	var env map[string]string
	var procEnv []string
	m.infoAs(t, "environ", &env)
	m.infoAs(t, "proc_environ", &procEnv)
	for k := range env {
		if !slices.Contains(guestEnvKeys, k) {
			t.Errorf("guest environment has %s=%q", k, env[k])
		}
	}
	for _, kv := range procEnv {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(guestEnvKeys, k) {
			t.Errorf("guest /proc/self/environ has %s", kv)
		}
	}
	if strings.Contains(res.Stdout, hostEnvValue) || strings.Contains(res.Stdout, hostEnvName) {
		t.Errorf("the host's %s reached the guest", hostEnvName)
	}
	if env["PATH"] == "" || env["HOME"] != "/workspace" {
		t.Errorf("guest environment %v lacks the runner's PATH and HOME", env)
	}

	// Descriptors: 0, 1 and 2 only (plus the one listing /proc/self/fd).
	var fds map[string]string
	var openFDs []int
	m.infoAs(t, "fds", &fds)
	m.infoAs(t, "open_fds", &openFDs)
	if !slices.Equal(openFDs, []int{0, 1, 2}) {
		t.Errorf("guest has descriptors %v open, want [0 1 2]: %v", openFDs, fds)
	}
	for fd, target := range fds {
		if fd != "0" && fd != "1" && fd != "2" && target != "gone" && !strings.HasPrefix(target, "/proc/") {
			t.Errorf("inherited descriptor %s -> %s", fd, target)
		}
	}
	t.Logf("guest descriptors %v", fds)

	// Devices.
	var devs map[string]string
	m.infoAs(t, "dev", &devs)
	for p, kind := range devs {
		switch {
		case guestDevices[p] != "":
			if kind != guestDevices[p] {
				t.Errorf("%s is %s, want %s", p, kind, guestDevices[p])
			}
		case guestDevOthers[p] != "":
			if kind != guestDevOthers[p] {
				t.Errorf("%s is %s, want %s", p, kind, guestDevOthers[p])
			}
		case strings.HasPrefix(kind, "c") || strings.HasPrefix(kind, "b"):
			t.Errorf("host device node %s (%s) in the guest", p, kind)
		default:
			t.Errorf("unexpected /dev entry %s (%s)", p, kind)
		}
	}
	for p := range guestDevices {
		if devs[p] == "" {
			t.Errorf("%s is missing", p)
		}
	}
	t.Logf("guest /dev: %v", devs)
	var kallsyms int
	m.infoAs(t, "kallsyms_nonzero", &kallsyms)
	// Not masked by the sandbox: the host's kptr_restrict and
	// perf_event_paranoid decide; logged, not asserted.
	t.Logf("/proc/kallsyms: %d non-zero addresses visible to the guest", kallsyms)
}
