package wazero

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/internal/sandbox"
)

// A run's child, seen from outside while its guest waits for a host call:
// no_new_privs, the seccomp filter, its rlimits, and (as root) its own
// network, IPC and UTS namespaces; a pooled run's child just the same.
func TestChildIsConfined(t *testing.T) {
	t.Run("fresh", func(t *testing.T) { testChildIsConfined(t, interpreter(t)) })
	t.Run("pooled", func(t *testing.T) {
		in := pooledInterpreter(t, 1)
		waitPool(t, in, 1)
		testChildIsConfined(t, in)
		if st := in.PoolState(); st.Taken != 1 {
			t.Fatalf("the run took no pooled child: %+v", st)
		}
	})
}

func testChildIsConfined(t *testing.T, in *Interpreter) {
	type seen struct {
		status, limits string
		ns             map[string]bool // namespace -> shared with this process
		// unfiltered: the child's threads without the seccomp filter (the
		// guest's thread started before the child confined itself).
		unfiltered []string
	}
	got := make(chan seen, 1)
	d := dispatcherFunc(func(ctx context.Context, frame []byte) []byte {
		var s seen
		// The run's child is the one confined: a pool's idle children
		// wait for their jobs' limits.
		var confined []int
		for _, pid := range children(t) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
			if strings.Contains(string(b), "NoNewPrivs:\t1") {
				confined, s.status = append(confined, pid), string(b)
			}
		}
		if len(confined) == 1 {
			dir := "/proc/" + strconv.Itoa(confined[0])
			tasks, _ := os.ReadDir(dir + "/task")
			for _, task := range tasks {
				b, _ := os.ReadFile(dir + "/task/" + task.Name() + "/status")
				if !strings.Contains(string(b), "Seccomp:\t2") {
					s.unfiltered = append(s.unfiltered, task.Name())
				}
			}
			if len(tasks) < 2 {
				s.unfiltered = append(s.unfiltered, "(no threads listed)")
			}
			b, _ := os.ReadFile(dir + "/limits")
			s.limits = string(b)
			s.ns = map[string]bool{}
			for _, ns := range []string{"net", "ipc", "uts"} {
				theirs, _ := os.Readlink(dir + "/ns/" + ns)
				ours, _ := os.Readlink("/proc/self/ns/" + ns)
				s.ns[ns] = theirs == ours
			}
		}
		got <- s
		return []byte(`{"status":"ok","result":1}`)
	})
	out := run(t, callScript(`b'{"call_id":"capability-1","capability":"echo","arguments":{}}'`), runOpts{d: d, in: in,
		limits: sandbox.Limits{OpenFiles: 100, FileSizeBytes: 1 << 20}})
	s := <-got
	if out.Status != sandbox.StatusOK {
		t.Fatalf("status %s stderr %s", out.Status, out.Stderr)
	}
	if len(s.unfiltered) > 0 {
		t.Errorf("threads of the child without the filter: %v", s.unfiltered)
	}
	for _, want := range []string{"NoNewPrivs:\t1", "Seccomp:\t2"} {
		if !strings.Contains(s.status, want) {
			t.Errorf("status lacks %q:\n%s", want, s.status)
		}
	}
	for _, want := range []string{
		fmt.Sprintf("Max open files            %-20d %-20d files", 100+childOwnFiles, 100+childOwnFiles),
		fmt.Sprintf("Max file size             %-20d %-20d bytes", 1<<20, 1<<20),
		"Max core file size        0                    0                    bytes",
	} {
		if !strings.Contains(s.limits, want) {
			t.Errorf("limits lack %q:\n%s", want, s.limits)
		}
	}
	for ns, shared := range s.ns {
		if shared == (childCloneflags() != 0) {
			t.Errorf("namespace %s shared: %v (root: %v)", ns, shared, os.Geteuid() == 0)
		}
	}
}

// The filter itself, in a process of its own (this test binary again):
// what a guest that escaped wasm into its child would try first.
func TestChildFilterRefuses(t *testing.T) {
	if os.Getenv("APYSUP_TEST_FILTER") == "1" {
		if err := confineChild(guestJob{OpenFiles: 16, FileSizeBytes: 1 << 20}); err != nil {
			fmt.Println("confine:", err)
			os.Exit(2)
		}
		_, serr := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		_, uerr := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		eerr := unix.Exec("/bin/true", []string{"true"}, nil)
		_, _, perr := unix.Syscall(unix.SYS_PTRACE, unix.PTRACE_TRACEME, 0, 0)
		f, oerr := os.Open("/proc/self/status") // files still open
		if oerr == nil {
			f.Close()
		}
		// ppoll of a descriptor it holds: the call channel's poll
		// (spin_linux.go), which would otherwise fall back to blocking
		// reads without a word.
		var pollErr error
		if r, w, err := os.Pipe(); err == nil {
			_, pollErr = unix.Poll([]unix.PollFd{{Fd: int32(r.Fd()), Events: unix.POLLIN}}, 0)
			r.Close()
			w.Close()
		}
		fmt.Printf("socket %v, unix %v, exec %v, ptrace %v, open %v, poll %v\n", serr, uerr, eerr, perr, oerr, pollErr)
		// Signal 0 and a read of a limit: harmless, but refused for any
		// process but this one (its parent here), allowed for itself.
		var lim unix.Rlimit
		parent, self := os.Getppid(), os.Getpid()
		fmt.Printf("tgkill other %v, self %v; prlimit other %v, self %v, own pid %v\n",
			unix.Tgkill(parent, parent, 0), unix.Tgkill(self, unix.Gettid(), 0),
			unix.Prlimit(parent, unix.RLIMIT_NOFILE, nil, &lim), unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &lim),
			unix.Prlimit(self, unix.RLIMIT_NOFILE, nil, &lim))
		os.Exit(0)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestChildFilterRefuses$", "-test.count=1")
	cmd.Env = append(os.Environ(), "APYSUP_TEST_FILTER=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := "socket operation not permitted, unix operation not permitted, exec operation not permitted, ptrace operation not permitted, open <nil>, poll <nil>\n" +
		"tgkill other operation not permitted, self <nil>; prlimit other operation not permitted, self <nil>, own pid <nil>\n"
	if string(out) != want {
		t.Fatalf("got %q, want %q", out, want)
	}
}
