package doctor

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/opencontainers/cgroups"
	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox/wazero"
)

// PythonPath is the interpreter the native backend runs; it must be 3.11.x.
const PythonPath = "/usr/bin/python3.11"

// probeTimeout bounds each probe process.
const probeTimeout = 5 * time.Second

func checkRoot() Check {
	const name = "root"
	if euid := os.Geteuid(); euid != 0 {
		return fail(name, CodeNotRoot, fmt.Sprintf("running as euid %d", euid),
			"run apysup as root (it maps each run to its own unprivileged uid range)")
	}
	return ok(name, "running as root")
}

func checkUserns(ctx context.Context) Check {
	const name = "user_namespaces"
	const fix = "enable user namespaces: sysctl -w user.max_user_namespaces=15000"
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		return fail(name, CodeUsernsUnavailable, "kernel without user namespaces: "+err.Error(),
			"use a kernel built with CONFIG_USER_NS=y")
	}
	max, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || max <= 0 {
		return fail(name, CodeUsernsUnavailable, "user.max_user_namespaces is "+strings.TrimSpace(string(b)), fix)
	}
	// The real test: create every namespace a run creates, with a mapped uid.
	flags := uintptr(unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET |
		unix.CLONE_NEWIPC | unix.CLONE_NEWUTS | unix.CLONE_NEWCGROUP)
	attr := &syscall.SysProcAttr{
		Cloneflags:  flags,
		Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
	}
	if err := probe(ctx, attr); err != nil {
		return fail(name, CodeUsernsUnavailable,
			"cannot create user, pid, net, ipc, uts and cgroup namespaces: "+err.Error(),
			"allow namespace creation for root (check seccomp/AppArmor of the host container runtime, e.g. run the CI VM or container privileged)")
	}
	return ok(name, fmt.Sprintf("user.max_user_namespaces=%d; user, mount, pid, net, ipc, uts and cgroup namespaces created", max))
}

// quickUserns reads the sysctls that turn user namespaces off.
func quickUserns() Check {
	const name = "user_namespaces"
	b, err := os.ReadFile("/proc/sys/user/max_user_namespaces")
	if err != nil {
		return fail(name, CodeUsernsUnavailable, "kernel without user namespaces: "+err.Error(),
			"use a kernel built with CONFIG_USER_NS=y")
	}
	if max, err := strconv.Atoi(strings.TrimSpace(string(b))); err != nil || max <= 0 {
		return fail(name, CodeUsernsUnavailable, "user.max_user_namespaces is "+strings.TrimSpace(string(b)),
			"enable user namespaces: sysctl -w user.max_user_namespaces=15000")
	}
	return ok(name, "user.max_user_namespaces="+strings.TrimSpace(string(b))+" (not probed)")
}

func quickMountns() Check {
	const name = "mount_namespaces"
	if _, err := os.Readlink("/proc/self/ns/mnt"); err != nil {
		return fail(name, CodeMountnsUnavailable, "no mount namespaces: "+err.Error(),
			"mount /proc; use a kernel with namespaces")
	}
	return ok(name, "mount namespaces present (not probed)")
}

func quickPython() Check {
	const name = "python"
	fi, err := os.Stat(PythonPath)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return fail(name, CodePythonMissing, PythonPath+" is not an executable file",
			"apt-get install -y python3.11-minimal")
	}
	if _, err := os.Stat("/usr/lib/python3.11/os.py"); err != nil {
		return fail(name, CodePythonMissing, "the standard library of "+PythonPath+" is missing: "+err.Error(),
			"apt-get install -y libpython3.11-minimal")
	}
	return ok(name, PythonPath+" present (not run)")
}

func checkMountns(ctx context.Context) Check {
	const name = "mount_namespaces"
	if err := probe(ctx, &syscall.SysProcAttr{Cloneflags: unix.CLONE_NEWNS}); err != nil {
		return fail(name, CodeMountnsUnavailable, "cannot create a mount namespace: "+err.Error(),
			"grant CAP_SYS_ADMIN to apysup (run it privileged)")
	}
	return ok(name, "mount namespace created")
}

// probe runs /bin/true with attr and waits for it.
func probe(ctx context.Context, attr *syscall.SysProcAttr) error {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/true")
	cmd.Env = []string{}
	cmd.SysProcAttr = attr
	return cmd.Run()
}

func checkPivotRoot() Check {
	const name = "pivot_root"
	fstype, err := rootFSType()
	if err != nil {
		return fail(name, CodePivotRootUnavailable, "cannot read /proc/self/mountinfo: "+err.Error(),
			"mount /proc")
	}
	// pivot_root(2) fails with EINVAL when the current root is the initial
	// ramfs/rootfs; runc then needs no_pivot, which we refuse to use.
	if fstype == "rootfs" || fstype == "ramfs" {
		return fail(name, CodePivotRootUnavailable, "the root file system is "+fstype+", pivot_root(2) refuses it",
			"boot from a real root file system (or switch_root out of the initramfs)")
	}
	return ok(name, "root file system is "+fstype)
}

// checkMountSetattr probes mount_setattr(2) (Linux 5.12): a run's directories
// are mounted into its started container with their flags set by it. The
// probe passes an invalid flag, so that a kernel that has the call answers
// EINVAL and changes nothing.
func checkMountSetattr() Check {
	const name = "mount_setattr"
	err := unix.MountSetattr(-1, "", 1<<31, &unix.MountAttr{})
	switch err {
	case unix.ENOSYS, unix.EPERM:
		return fail(name, CodeMountAPIUnavailable, "mount_setattr(2) is unavailable ("+err.Error()+")",
			"run a Linux kernel of version 5.12 or later, without a seccomp filter that refuses mount_setattr")
	case nil:
		return fail(name, CodeMountAPIUnavailable, "mount_setattr(2) accepted an invalid flag",
			"report this kernel to the apysup developers")
	}
	return ok(name, "mount_setattr(2) is available")
}

func rootFSType() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", err
	}
	defer f.Close()
	fstype := ""
	s := bufio.NewScanner(f)
	for s.Scan() {
		// id parent major:minor root mountpoint options [optional...] - fstype source superopts
		fields := strings.Fields(s.Text())
		if len(fields) < 5 || fields[4] != "/" {
			continue
		}
		for i, f := range fields {
			if f == "-" && i+1 < len(fields) {
				fstype = fields[i+1] // the last mount on "/" wins
			}
		}
	}
	if fstype == "" {
		return "", errors.New("no mount on /")
	}
	return fstype, s.Err()
}

func checkSeccompKernel() Check {
	const name = "seccomp_kernel"
	const fix = "use a kernel built with CONFIG_SECCOMP=y and CONFIG_SECCOMP_FILTER=y"
	if _, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil {
		return fail(name, CodeSeccompUnavailable, "prctl(PR_GET_SECCOMP): "+err.Error(), fix)
	}
	b, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	if err != nil {
		return fail(name, CodeSeccompUnavailable, "no seccomp filter support: "+err.Error(), fix)
	}
	avail := strings.Fields(string(b))
	for _, want := range []string{"errno", "kill_process", "allow"} {
		if !contains(avail, want) {
			return fail(name, CodeSeccompUnavailable, "seccomp action "+want+" missing (have "+strings.TrimSpace(string(b))+")", fix)
		}
	}
	return ok(name, "seccomp filters with actions "+strings.Join(avail, ","))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cgroupControllers are the controllers a run needs, with the reason.
var cgroupControllers = []struct{ name, why string }{
	{"memory", "memory and swap limit, OOM detection"},
	{"pids", "pids limit (fork bombs)"},
	{"cpu", "CPU quota"},
}

func checkCgroups() []Check {
	if cgroups.IsCgroup2UnifiedMode() {
		return checkCgroupsV2()
	}
	return checkCgroupsV1()
}

func checkCgroupsV1() []Check {
	ctls := append(cgroupControllers[:len(cgroupControllers):len(cgroupControllers)],
		struct{ name, why string }{"devices", "device rules (mandatory in libcontainer)"},
		struct{ name, why string }{"freezer", "freezing the tree before it is killed"})
	var out []Check
	for _, c := range ctls {
		name := "cgroup_v1_" + c.name
		dir, err := cgroups.GetOwnCgroupPath(c.name)
		if err != nil {
			out = append(out, fail(name, CodeCgroupUnavailable,
				fmt.Sprintf("cgroup v1 controller %s (%s) not mounted: %v", c.name, c.why, err),
				fmt.Sprintf("mount it: mkdir -p /sys/fs/cgroup/%[1]s && mount -t cgroup -o %[1]s cgroup /sys/fs/cgroup/%[1]s", c.name)))
			continue
		}
		if err := unix.Access(dir, unix.W_OK); err != nil {
			out = append(out, fail(name, CodeCgroupUnavailable,
				fmt.Sprintf("own cgroup %s is not writable: %v", dir, err),
				"run apysup as root with the cgroup file system mounted read-write"))
			continue
		}
		if c.name == "memory" {
			if _, err := os.Stat(filepath.Join(dir, "memory.memsw.limit_in_bytes")); err != nil {
				out = append(out, fail(name, CodeCgroupUnavailable,
					"no swap accounting (memory.memsw.*): a guest could swap past its memory limit",
					"boot with swapaccount=1 on the kernel command line"))
				continue
			}
		}
		out = append(out, ok(name, c.why+": "+dir))
	}
	return out
}

func checkCgroupsV2() []Check {
	own, err := cgroups.ParseCgroupFile("/proc/self/cgroup")
	if err != nil {
		return []Check{fail("cgroup_v2", CodeCgroupUnavailable, "cannot read /proc/self/cgroup: "+err.Error(), "mount /proc")}
	}
	dir := filepath.Join("/sys/fs/cgroup", own[""])
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return []Check{fail("cgroup_v2", CodeCgroupUnavailable, "cannot read "+dir+"/cgroup.controllers: "+err.Error(),
			"mount cgroup2 at /sys/fs/cgroup")}
	}
	have := strings.Fields(string(b))
	var out []Check
	for _, c := range cgroupControllers {
		name := "cgroup_v2_" + c.name
		if !contains(have, c.name) {
			out = append(out, fail(name, CodeCgroupUnavailable,
				fmt.Sprintf("controller %s (%s) not delegated to %s (have: %s)", c.name, c.why, dir, strings.TrimSpace(string(b))),
				fmt.Sprintf("enable it in the parent: echo +%s > %s/cgroup.subtree_control", c.name, filepath.Dir(dir))))
			continue
		}
		out = append(out, ok(name, c.why+": "+dir))
	}
	if err := unix.Access(dir, unix.W_OK); err != nil {
		out = append(out, fail("cgroup_v2_writable", CodeCgroupUnavailable, "own cgroup "+dir+" is not writable: "+err.Error(),
			"run apysup as root with /sys/fs/cgroup mounted read-write"))
	}
	return out
}

func checkOverlay() Check {
	const name = "overlayfs"
	b, err := os.ReadFile("/proc/filesystems")
	if err == nil && bytes.Contains(b, []byte("\toverlay\n")) {
		c := ok(name, "overlay listed in /proc/filesystems (seals the supervisor binary per run)")
		c.Required = false
		return c
	}
	c := fail(name, CodeOverlayUnavailable,
		"overlayfs not available: each run copies the supervisor binary into memory (slower, still safe)",
		"modprobe overlay")
	c.Required = false
	return c
}

func checkPython(ctx context.Context) Check {
	const name = "python"
	fi, err := os.Stat(PythonPath)
	if err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		detail := PythonPath + " is not an executable file"
		if err != nil {
			detail = err.Error()
		}
		return fail(name, CodePythonMissing, detail, "apt-get install -y python3.11-minimal")
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, PythonPath, "-I", "-S", "-c",
		"import sys; print('%d.%d.%d' % sys.version_info[:3])")
	cmd.Env = []string{}
	out, err := cmd.Output()
	if err != nil {
		return fail(name, CodePythonMissing, PythonPath+" does not run: "+err.Error(), "apt-get install --reinstall -y python3.11-minimal")
	}
	v := strings.TrimSpace(string(out))
	if !strings.HasPrefix(v, "3.11.") {
		return fail(name, CodePythonVersion, PythonPath+" is "+v+", want 3.11.x (the version of the WASI build)",
			"install Debian 12's python3.11-minimal")
	}
	return ok(name, PythonPath+" "+v)
}

// checkWasiRevision compares the host's python3.11 revision (dpkg's status
// file; "" means the system's) with the one the WASI build is built from.
// Not required: only the wazero backend refuses a mismatch.
func checkWasiRevision(statusPath string) Check {
	const name = "wasi_python_revision"
	c := func() Check {
		pinned, err := wazero.PinnedRevision()
		if err != nil {
			return fail(name, CodeWasiRevision, "the embedded WASI build inputs: "+err.Error(), "rebuild apysup from a clean tree")
		}
		host, found, err := wazero.HostRevision(statusPath)
		switch {
		case err != nil:
			return fail(name, CodeWasiRevision, err.Error(), wazero.RevisionFix)
		case !found:
			return ok(name, "no python3.11 package on the host: the wazero backend runs alone (the WASI build is python3.11 "+pinned+")")
		case host != pinned:
			return fail(name, CodeWasiRevision, wazero.RevisionMismatch(pinned, host), wazero.RevisionFix)
		}
		return ok(name, "python3.11 "+host+" on the host and in the WASI build")
	}()
	c.Required = false
	return c
}

// quickWasiRevision is checkWasiRevision, remembered while dpkg's status
// file keeps its size and modification time: Quick stays a stat.
func quickWasiRevision() Check {
	fi, err := os.Stat(wazero.DpkgStatus)
	if err != nil {
		return checkWasiRevision("")
	}
	stamp := fmt.Sprintf("%d %d", fi.Size(), fi.ModTime().UnixNano())
	wasiRevisionCache.Lock()
	defer wasiRevisionCache.Unlock()
	if wasiRevisionCache.stamp != stamp {
		wasiRevisionCache.stamp, wasiRevisionCache.check = stamp, checkWasiRevision("")
	}
	return wasiRevisionCache.check
}

var wasiRevisionCache struct {
	sync.Mutex
	stamp string
	check Check
}
