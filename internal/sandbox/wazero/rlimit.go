package wazero

import (
	"context"
	"encoding/binary"
	"math"
	"sync"
	"sync/atomic"

	"github.com/tetratelabs/wazero/api"
)

// The resource limits as the native guest sees them (resource.getrlimit,
// setrlimit and prlimit; python/wasi/_apysup_resource.c).
//
// Natively the guest starts with the limits the sandbox sets (RLIMIT_CPU
// at the run's CPU backstop, RLIMIT_FSIZE and RLIMIT_NOFILE at the run's
// limits, RLIMIT_CORE, RLIMIT_NICE and RLIMIT_RTPRIO at 0) and inherits
// every other from the supervisor, as the wazero child does. A guest may
// lower a limit and raise a soft one up to its hard one, never raise a
// hard one (it has no CAP_SYS_RESOURCE); Linux's checks, and the answers
// of pid 1 (its init, whose limits are the sandbox's) are kept here.
//
// What a lowered limit does under wazero: RLIMIT_NOFILE bounds the
// guest's open files (the budget every mount counts against), RLIMIT_AS
// and RLIMIT_DATA its linear memory (a grow past them fails as a native
// allocation past them does, without making the run's status
// memory_limit), and RLIMIT_FSIZE the files it writes (sizedFile: EFBIG).
// RLIMIT_CPU is recorded and not enforced: the run's timeout still ends a
// spinning guest. The others govern what WASI has none of (processes,
// threads, locked memory, message queues, core dumps, the scheduler) and
// are recorded only.
const (
	rlimitCPU        = 0
	rlimitFsize      = 1
	rlimitData       = 2
	rlimitStack      = 3
	rlimitCore       = 4
	rlimitNproc      = 6
	rlimitNofile     = 7
	rlimitAs         = 9
	rlimitSigpending = 11
	rlimitNice       = 13
	rlimitRtprio     = 14
	rlimitCount      = 16 // RLIM_NLIMITS

	rlimInfinity = math.MaxUint64
	// glibc's answers where it cannot read the kernel's: legacy_ARG_MAX
	// (the least sysconf answers), and the NGROUPS_MAX and MINSIGSTKSZ of
	// its headers.
	glibcArgMax      = 131072
	glibcNgroupsMax  = 65536
	glibcMinSigstksz = 2048
	// nrOpen is Linux's fs.nr_open default: no RLIMIT_NOFILE above it.
	nrOpen = 1 << 20

	rlimitName      = "rlimit"
	rusageName      = "rusage"
	rlimitsWhoGuest = 0 // the guest itself: pid 0 or its own pid
	rlimitsWhoInit  = 1 // pid 1
)

// rlimit answers, for the C side: 0 done, or which errno Linux answers.
const (
	rlimitOK     = 0
	rlimitEPERM  = 1
	rlimitEINVAL = 2
)

// rlimitTable is [resource][soft, hard].
type rlimitTable [rlimitCount][2]uint64

// guestLimits is one guest's resource limits, and its init's.
type guestLimits struct {
	mu    sync.Mutex
	guest rlimitTable
	init  rlimitTable
	files *openFiles
	mem   *linearMemory
	// fileSize bounds the files the guest writes (sizedFile).
	fileSize *atomic.Int64
}

// newGuestLimits starts from the inherited limits (inherited) and the
// values the native sandbox sets, with the open files the guest's start
// may hold; bind sets the job's.
func newGuestLimits(inherited rlimitTable, files *openFiles, mem *linearMemory, fileSize *atomic.Int64) *guestLimits {
	l := &guestLimits{guest: inherited, files: files, mem: mem, fileSize: fileSize}
	for _, r := range []int{rlimitCore, rlimitNice, rlimitRtprio} {
		l.guest[r] = [2]uint64{0, 0}
	}
	l.init = l.guest
	return l
}

// bind sets the job's limits, as the native sandbox sets them for both
// its init and its guest.
func (l *guestLimits) bind(j guestJob) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, t := range []*rlimitTable{&l.guest, &l.init} {
		t[rlimitCPU] = [2]uint64{j.CPUSeconds, j.CPUSeconds + 1}
		t[rlimitFsize] = [2]uint64{uint64(max(j.FileSizeBytes, 0)), uint64(max(j.FileSizeBytes, 0))}
		t[rlimitNofile] = [2]uint64{j.OpenFiles, j.OpenFiles}
	}
}

// table is the guest's limits (who rlimitsWhoGuest) or its init's.
func (l *guestLimits) table(who int32) *rlimitTable {
	if who == rlimitsWhoInit {
		return &l.init
	}
	return &l.guest
}

// get is getrlimit.
func (l *guestLimits) get(who int32, resource int) [2]uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.table(who)[resource]
}

// set is setrlimit, with Linux's checks (do_prlimit) for a process
// without CAP_SYS_RESOURCE, and its effects on the guest (above).
func (l *guestLimits) set(who int32, resource int, soft, hard uint64) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.table(who)
	switch {
	case soft > hard:
		return rlimitEINVAL
	case resource == rlimitNofile && hard > nrOpen, hard > t[resource][1]:
		return rlimitEPERM
	}
	if who == rlimitsWhoGuest {
		switch resource {
		case rlimitNofile:
			l.files.setMax(int(soft))
		case rlimitAs, rlimitData:
			other := rlimitData
			if resource == rlimitData {
				other = rlimitAs
			}
			l.mem.setGuestLimit(min(soft, t[other][0]))
		case rlimitFsize:
			l.fileSize.Store(int64(min(soft, math.MaxInt64)))
		}
	}
	t[resource] = [2]uint64{soft, hard}
	return rlimitOK
}

// sysconfLimits is glibc's sysconf answer, in writeLimits' order, for
// the names that depend on the guest's limits or the kernel: the
// argument space is a quarter of RLIMIT_STACK (at least legacy
// ARG_MAX), the processes RLIMIT_NPROC, the open files RLIMIT_NOFILE,
// the queued signals RLIMIT_SIGPENDING, each soft limit as glibc reads
// it at each call (RLIM_INFINITY is -1 as a 64-bit integer).
func (l *guestLimits) sysconfLimits() [limitCount]uint64 {
	l.mu.Lock()
	t := l.guest
	l.mu.Unlock()
	kernel := kernelLimits()
	var limits [limitCount]uint64
	limits[limitArgMax] = max(glibcArgMax, t[rlimitStack][0]/4)
	limits[limitChildMax] = t[rlimitNproc][0]
	limits[limitNgroupsMax] = kernel[0]
	limits[limitOpenMax] = t[rlimitNofile][0]
	limits[limitSigqueueMax] = t[rlimitSigpending][0]
	limits[limitMinSigstksz] = kernel[1]
	return limits
}

// rlimitsKey is the context key of a run's *guestLimits.
type rlimitsKey struct{}

// rlimitCall is rlimit(who, resource, set, limits): limits points to four
// 64-bit words, the new soft and hard limits (read when set is 1) and
// the old ones (written). It answers rlimitOK, rlimitEPERM or
// rlimitEINVAL (a resource out of range, a soft limit above its hard one,
// or a buffer outside the guest's memory).
func rlimitCall(ctx context.Context, mem api.Memory, who, resource, set int32, ptr uint32) int32 {
	l, _ := ctx.Value(rlimitsKey{}).(*guestLimits)
	if l == nil || mem == nil || resource < 0 || resource >= rlimitCount || ptr > math.MaxUint32-32 {
		return rlimitEINVAL
	}
	words, ok := mem.Read(ptr, 32)
	if !ok {
		return rlimitEINVAL
	}
	old := l.get(who, int(resource))
	if set == 1 {
		if errno := l.set(who, int(resource), binary.LittleEndian.Uint64(words[0:]), binary.LittleEndian.Uint64(words[8:])); errno != rlimitOK {
			return errno
		}
	}
	if writeWords(mem, ptr+16, true, old[:]) != 2 {
		return rlimitEINVAL
	}
	return rlimitOK
}
