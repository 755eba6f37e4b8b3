package wazero

import (
	"context"
	"fmt"
	"math"
	"math/bits"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
)

// The machine as the native guest sees it: its CPUs and its load average.
//
// CPUs. Natively
// os.cpu_count() is the number of online CPUs and os.sched_getaffinity(0)
// all of them (runc's init resets the affinity it inherits, whatever the
// supervisor's); under WASI os.cpu_count() was 1 and sched_getaffinity
// did not exist, so a script that sized a worker pool by either printed
// or did something else on the two backends. The WASI build asks this
// module for both (python/wasi/_apysup_host.c, _apysup_os.c).
//
// Load average. Natively os.getloadavg() is glibc's, from sysinfo(2):
// the kernel's fixed-point loads over 65536. Under WASI it did not exist.
// The host answers the same, at each call.
//
// Memory. Natively sysconf's page size is the machine's and its physical
// and available pages are sysinfo(2)'s total and free memory in pages:
// os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") is the usual
// way to read the machine's memory. wasi-libc answered WebAssembly's
// 64 KiB page and negative page counts. The host answers glibc's three.
//
// Limits. glibc's sysconf reads some answers from the process's rlimits
// and the kernel: the argument space (a quarter of RLIMIT_STACK), the
// processes (RLIMIT_NPROC), the open files (RLIMIT_NOFILE: natively the
// run's Limits.OpenFiles), the queued signals (RLIMIT_SIGPENDING), the
// supplementary groups (/proc/sys/kernel/ngroups_max) and the smallest
// signal stack (the kernel's AT_MINSIGSTKSZ). wasi-libc answered -1 or
// musl's constants, or had no such name. The host answers glibc's six
// from the guest's limits (rlimit.go); the WASI build answers every other
// name from glibc's table (python/wasi/_apysup_host.c).
const (
	hostInfoModule  = "apysup_host"
	onlineCPUsName  = "online_cpus"
	loadavgName     = "loadavg"
	memoryPagesName = "memory_pages"
	limitsName      = "sysconf_limits"
	// maxCPUs bounds the mask: the guest's buffer holds 4,096 CPUs.
	maxCPUs = 4096
)

// exportHostInfo instantiates the module in rt. The CPUs and the kernel's
// constants are read here, when the interpreter loads, before a wazero
// child confines itself.
func exportHostInfo(ctx context.Context, rt wazero.Runtime) error {
	mask := onlineCPUs()
	kernelLimits()
	b := rt.NewHostModuleBuilder(hostInfoModule)
	exportI32(b, onlineCPUsName, func(_ context.Context, mem api.Memory, p []uint64) int32 {
		return writeCPUMask(mem, mask, api.DecodeU32(p[0]), api.DecodeI32(p[1]))
	}, "mask", "len")
	exportI32(b, loadavgName, func(_ context.Context, mem api.Memory, p []uint64) int32 {
		return writeLoadavg(mem, api.DecodeU32(p[0]))
	}, "avg")
	exportI32(b, memoryPagesName, func(_ context.Context, mem api.Memory, p []uint64) int32 {
		return writeMemoryPages(mem, api.DecodeU32(p[0]))
	}, "pages")
	exportI32(b, limitsName, func(ctx context.Context, mem api.Memory, p []uint64) int32 {
		return writeLimits(ctx, mem, api.DecodeU32(p[0]))
	}, "limits")
	exportI32(b, rlimitName, func(ctx context.Context, mem api.Memory, p []uint64) int32 {
		return rlimitCall(ctx, mem, api.DecodeI32(p[0]), api.DecodeI32(p[1]), api.DecodeI32(p[2]), api.DecodeU32(p[3]))
	}, "who", "resource", "set", "limits")
	exportI32(b, rusageName, func(ctx context.Context, mem api.Memory, p []uint64) int32 {
		return writeUsage(ctx, mem, api.DecodeU32(p[0]))
	}, "usage")
	if _, err := b.Instantiate(ctx); err != nil {
		return fmt.Errorf("wazero: host info module: %w", err)
	}
	return nil
}

// exportI32 exports from b a function of i32 parameters (named params)
// answering one i32: fn's answer from the call's context, the guest's
// memory and the parameters.
func exportI32(b wazero.HostModuleBuilder, name string, fn func(ctx context.Context, mem api.Memory, params []uint64) int32, params ...string) {
	types := make([]api.ValueType, len(params))
	for i := range types {
		types[i] = api.ValueTypeI32
	}
	b.NewFunctionBuilder().
		WithGoModuleFunction(api.GoModuleFunc(func(ctx context.Context, mod api.Module, stack []uint64) {
			stack[0] = api.EncodeI32(fn(ctx, mod.Memory(), stack[:len(params)]))
		}), types, []api.ValueType{api.ValueTypeI32}).
		WithParameterNames(params...).
		Export(name)
}

// writeCPUMask is online_cpus(mask, len): it writes up to n bytes of the
// mask at ptr and returns how many CPUs it holds, or 0 when the buffer
// lies outside the guest's memory.
func writeCPUMask(mem api.Memory, mask []byte, ptr uint32, n int32) int32 {
	if n > 0 {
		out := make([]byte, n)
		copy(out, mask)
		if mem == nil || !mem.Write(ptr, out) {
			return 0
		}
	}
	count := 0
	for _, b := range mask {
		count += bits.OnesCount8(b)
	}
	return int32(count)
}

// writeLoadavg is loadavg(avg): it writes the three load averages as
// doubles at ptr and returns 3, or 0 when the host cannot tell or the
// buffer lies outside the guest's memory.
func writeLoadavg(mem api.Memory, ptr uint32) int32 {
	avg, ok := loadavg()
	var words [3]uint64
	for i, v := range avg {
		words[i] = math.Float64bits(v)
	}
	return writeWords(mem, ptr, ok, words[:])
}

// writeMemoryPages is memory_pages(pages): it writes the page size, the
// physical pages and the available pages as 64-bit integers at ptr and
// returns 3, or 0 when the host cannot tell or the buffer lies outside
// the guest's memory.
func writeMemoryPages(mem api.Memory, ptr uint32) int32 {
	pages, ok := memoryPages()
	return writeWords(mem, ptr, ok, pages[:])
}

// The order of sysconf_limits' words, which _apysup_host.c shares.
const (
	limitArgMax = iota
	limitChildMax
	limitNgroupsMax
	limitOpenMax
	limitSigqueueMax
	limitMinSigstksz
	limitCount
)

// writeLimits is sysconf_limits(limits): it writes glibc's answers for
// the six names above as 64-bit integers at ptr (-1 where glibc answers
// -1: no limit) and returns 6, or 0 outside a run or when the buffer
// lies outside the guest's memory. They follow the guest's own limits
// (rlimit.go): the open files are the run's limit, as the guest's
// RLIMIT_NOFILE is natively, until the guest lowers it.
func writeLimits(ctx context.Context, mem api.Memory, ptr uint32) int32 {
	l, _ := ctx.Value(rlimitsKey{}).(*guestLimits)
	if l == nil {
		return 0
	}
	limits := l.sysconfLimits()
	return writeWords(mem, ptr, true, limits[:])
}

// writeUsage is rusage(usage): the guest's getrusage, as 64-bit words at
// ptr in usageWords' order, and usageCount, or 0 when the host cannot
// tell or the buffer lies outside the guest's memory. Its CPU times,
// faults, blocks and context switches are those of the thread that runs
// the guest (the host function runs on it); its largest resident size,
// in KiB, is the guest's largest linear memory, which is what of the
// native process's resident memory is the guest's.
func writeUsage(ctx context.Context, mem api.Memory, ptr uint32) int32 {
	l, _ := ctx.Value(rlimitsKey{}).(*guestLimits)
	usage, ok := threadUsage()
	if l == nil || !ok {
		return 0
	}
	_, high := l.mem.usage()
	usage[usageMaxRSS] = high / 1024
	return writeWords(mem, ptr, true, usage[:])
}

// The order of rusage's words, which _apysup_resource.c shares.
const (
	usageUtimeMicros = iota
	usageStimeMicros
	usageMaxRSS
	usageMinflt
	usageMajflt
	usageInblock
	usageOublock
	usageNvcsw
	usageNivcsw
	usageCount
)

// writeWords writes the host's answers, when it has them (ok), as
// little-endian 64-bit words at ptr: how many, or 0 when it has none or
// they do not fit in the guest's memory.
func writeWords(mem api.Memory, ptr uint32, ok bool, words []uint64) int32 {
	if !ok || mem == nil || ptr > math.MaxUint32-8*uint32(len(words)) { // no word may wrap to 0
		return 0
	}
	for i, w := range words {
		if !mem.WriteUint64Le(ptr+uint32(8*i), w) {
			return 0
		}
	}
	return int32(len(words))
}

// onlineCPUs is the mask of the online CPUs (CPU i is bit i%8 of byte
// i/8): the kernel's list, or where it cannot be read (off Linux) as many
// as the Go runtime counts.
var onlineCPUs = sync.OnceValue(func() []byte {
	if b, err := os.ReadFile("/sys/devices/system/cpu/online"); err == nil {
		if mask, ok := parseCPUList(strings.TrimSpace(string(b))); ok {
			return mask
		}
	}
	mask := make([]byte, (min(runtime.NumCPU(), maxCPUs)+7)/8)
	for i := range min(runtime.NumCPU(), maxCPUs) {
		mask[i/8] |= 1 << (i % 8)
	}
	return mask
})

// parseCPUList reads the kernel's CPU list format ("0-3,5,7-8") into a
// mask; CPUs from maxCPUs on are left out. An empty or malformed list is
// not ok.
func parseCPUList(s string) ([]byte, bool) {
	var mask []byte
	if s == "" {
		return nil, false
	}
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		first, err := strconv.Atoi(lo)
		if err != nil || first < 0 {
			return nil, false
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil || last < first {
				return nil, false
			}
		}
		for cpu := first; cpu <= min(last, maxCPUs-1); cpu++ {
			for len(mask) <= cpu/8 {
				mask = append(mask, 0)
			}
			mask[cpu/8] |= 1 << (cpu % 8)
		}
	}
	return mask, len(mask) > 0
}
