package native

import (
	"fmt"
	"slices"

	"github.com/opencontainers/cgroups"
	// Registers the device-rule managers; without them the cgroup manager
	// refuses a config with device rules.
	_ "github.com/opencontainers/cgroups/devices"
	devconfig "github.com/opencontainers/cgroups/devices/config"
	"github.com/opencontainers/runc/libcontainer/configs"
	"github.com/opencontainers/runc/libcontainer/specconv"
	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

// guestDevices are the only device nodes a guest gets.
var guestDevices = map[string]bool{
	"/dev/null": true, "/dev/zero": true, "/dev/full": true, "/dev/random": true, "/dev/urandom": true,
}

// Paths runc masks or makes read-only by default (runtime-spec defaults).
var (
	maskedPaths = []string{
		"/proc/acpi", "/proc/asound", "/proc/kcore", "/proc/keys", "/proc/latency_stats",
		"/proc/timer_list", "/proc/timer_stats", "/proc/sched_debug", "/proc/scsi",
		"/proc/interrupts",
	}
	readonlyPaths = []string{"/proc/bus", "/proc/fs", "/proc/irq", "/proc/sys", "/proc/sysrq-trigger"}
)

// mountSources are the host directories of one run.
type mountSources struct {
	guestFiles string // -> /opt/apysup (ro)
	runDir     string // -> /run/apysup (ro); the run directory arrives at Assign
	workspace  string // -> /workspace (rw); the workspace arrives at Assign
}

const (
	bindRO = unix.MS_BIND | unix.MS_REC | unix.MS_RDONLY | unix.MS_NOSUID | unix.MS_NODEV
	bindRW = unix.MS_BIND | unix.MS_REC | unix.MS_NOSUID | unix.MS_NODEV
)

// containerConfig is what libcontainer is asked to build for one run.
func containerConfig(root *rootfs, src mountSources, ids IDPair, cgroupPath string,
	limits sandbox.Limits, sc *configs.Seccomp) *configs.Config {
	var devs []*devconfig.Device
	rules := []*devconfig.Rule{{Type: devconfig.WildcardDevice, Major: devconfig.Wildcard,
		Minor: devconfig.Wildcard, Permissions: "rwm", Allow: false}}
	for _, d := range specconv.AllowedDevices {
		if guestDevices[d.Path] {
			devs = append(devs, d)
			rules = append(rules, &d.Rule)
		}
	}
	mounts := []*configs.Mount{
		{Source: "proc", Destination: "/proc", Device: "proc",
			Flags: unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_NODEV},
		{Source: "tmpfs", Destination: "/dev", Device: "tmpfs",
			Flags: unix.MS_NOSUID | unix.MS_NOEXEC | unix.MS_STRICTATIME,
			Data:  fmt.Sprintf("mode=755,size=%d,nr_inodes=%d", sandbox.DevBytes, sandbox.DevFiles)},
	}
	// /tmp's caps, and /dev/shm's.
	tmpData := fmt.Sprintf("mode=1777,size=%d,nr_inodes=%d", limits.TmpBytes, limits.TmpFiles())
	for _, d := range root.binds {
		mounts = append(mounts, &configs.Mount{Source: d, Destination: d, Device: "bind", Flags: bindRO})
	}
	mounts = append(mounts,
		&configs.Mount{Source: src.guestFiles, Destination: sandbox.GuestFilesDir, Device: "bind", Flags: bindRO | unix.MS_NOEXEC},
		&configs.Mount{Source: src.runDir, Destination: sandbox.GuestRunDir, Device: "bind", Flags: bindRO | unix.MS_NOEXEC},
		// /tmp allows exec like /workspace (docs/guest-api.md): noexec is
		// no boundary where a guest may map memory executable anyway, and
		// programs (CPython's own tests among them) run what they write
		// to a temporary directory.
		&configs.Mount{Source: "tmpfs", Destination: "/tmp", Device: "tmpfs",
			Flags: unix.MS_NOSUID | unix.MS_NODEV, Data: tmpData},
		// POSIX shared memory and semaphores (sem_open, shm_open) live in
		// /dev/shm: multiprocessing's locks, queues and pools need it.
		// A tmpfs of its own with /tmp's caps, noexec as Docker's; its
		// pages count against the run's memory limit like /tmp's.
		&configs.Mount{Source: "tmpfs", Destination: "/dev/shm", Device: "tmpfs",
			Flags: unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, Data: tmpData},
		&configs.Mount{Source: src.workspace, Destination: sandbox.GuestWorkDir, Device: "bind", Flags: bindRW},
	)
	pids := limits.Pids
	cpuSeconds := limits.CPUSeconds() // RLIMIT_CPU's backstop: sandbox.Limits.CPUSeconds
	cpuPeriod := uint64(100_000)
	return &configs.Config{
		Rootfs:     root.dir,
		Readonlyfs: true,
		Hostname:   "sandbox",
		Mounts:     mounts,
		Devices:    devs,
		Namespaces: configs.Namespaces([]configs.Namespace{
			{Type: configs.NEWNS}, {Type: configs.NEWUTS}, {Type: configs.NEWIPC}, {Type: configs.NEWPID},
			{Type: configs.NEWUSER}, {Type: configs.NEWNET}, {Type: configs.NEWCGROUP},
		}),
		UIDMappings: []configs.IDMap{
			{ContainerID: 0, HostID: int64(ids.Root), Size: 1},
			{ContainerID: GuestUID, HostID: int64(ids.Guest), Size: 1},
		},
		GIDMappings: []configs.IDMap{
			{ContainerID: 0, HostID: int64(ids.Root), Size: 1},
			{ContainerID: GuestGID, HostID: int64(ids.Guest), Size: 1},
		},
		Networks:        []*configs.Network{{Type: "loopback"}},
		Capabilities:    &configs.Capabilities{},
		NoNewPrivileges: true,
		Seccomp:         sc,
		MaskPaths:       append(slices.Clone(maskedPaths), sandbox.HostPackageDirs...), // the host's packages (a missing one is skipped)
		ReadonlyPaths:   readonlyPaths,
		// No ParentDeathSignal: with runc v1.5.3 it only reaches nsexec's
		// first stage (the init is a clone of a clone and starts without it),
		// and one tied to a Go thread fires whenever the runtime retires that
		// thread. A dead supervisor's runs are swept by the next New.
		Rlimits: []configs.Rlimit{
			{Type: unix.RLIMIT_CORE, Hard: 0, Soft: 0},
			{Type: unix.RLIMIT_CPU, Soft: cpuSeconds, Hard: cpuSeconds + 1},
			{Type: unix.RLIMIT_NOFILE, Hard: limits.OpenFiles, Soft: limits.OpenFiles},
			{Type: unix.RLIMIT_FSIZE, Hard: uint64(limits.FileSizeBytes), Soft: uint64(limits.FileSizeBytes)},
			// Whatever the supervisor's own: the guest may lower its
			// processes' priority (os.nice, os.setpriority,
			// os.sched_setscheduler are allowed), never raise it or take a
			// real-time policy, which the cgroup's CPU quota would not bound.
			{Type: unix.RLIMIT_NICE, Hard: 0, Soft: 0},
			{Type: unix.RLIMIT_RTPRIO, Hard: 0, Soft: 0},
		},
		Cgroups: &cgroups.Cgroup{
			Path: cgroupPath,
			Resources: &cgroups.Resources{
				Memory:     limits.MemoryBytes,
				MemorySwap: limits.MemoryBytes, // memory+swap == memory: no swap
				PidsLimit:  &pids,
				CpuPeriod:  cpuPeriod,
				CpuQuota:   int64(limits.CPUs * float64(cpuPeriod)),
				Devices:    rules,
			},
		},
	}
}
