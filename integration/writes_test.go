package integration

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
)

// TestWritesOutsideWorkspaceAndTmpFail: the root, the system binds, the
// runner's files, the job and the channel directory, /proc/sys and
// /proc/sysrq-trigger are all read-only; /workspace and /tmp are not.
func TestWritesOutsideWorkspaceAndTmpFail(t *testing.T) {
	t.Parallel()
	need(t)
	res := runGuest(t, "writes.py", sandbox.Limits{})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	const denied = "EROFS|EACCES|EPERM"
	want := map[string]string{}
	for _, d := range []string{"/", "/etc", "/usr", "/usr/bin", "/usr/lib", "/opt", "/opt/apysup", "/run", "/run/apysup",
		"/run/apysup/job", "/bin", "/lib", "/dev", "/proc", "/proc/sys", "/proc/sys/kernel"} {
		for _, op := range []string{"create:", "mkdir:", "symlink:"} {
			want[op+d] = denied
		}
	}
	// proc refuses new entries with ENOENT.
	for _, d := range []string{"/proc", "/proc/sys", "/proc/sys/kernel"} {
		for _, op := range []string{"create:", "mkdir:", "symlink:"} {
			want[op+d] += "|ENOENT"
		}
	}
	for _, p := range []string{"/etc/passwd", "/etc/hosts", "/usr/bin/python3.11", "/opt/apysup/apysup_runner.py",
		"/run/apysup/channel.json", "/run/apysup/job/prelude.py", "/proc/sysrq-trigger", "/proc/sys/kernel/hostname",
		"/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sys/kernel/modprobe", "/proc/sys/fs/file-max",
		"/proc/sys/net/ipv4/ip_forward", "/proc/sys/user/max_user_namespaces"} {
		want["open-write:"+p] = denied
		if _, err := os.Stat(p); os.IsNotExist(err) && strings.HasPrefix(p, "/proc/") {
			want["open-write:"+p] += "|ENOENT" // this kernel has no such file
		}
	}
	for _, k := range []string{"chmod:/etc/passwd", "chmod:/usr/bin/python3.11", "rename:/etc/hosts",
		"unlink:/opt/apysup/apysup_runner.py", "utime:/usr/bin/python3.11", "rmtree:/run/apysup/job", "chown:/workspace"} {
		want[k] = denied
	}
	for _, k := range []string{"map:uid_map", "map:gid_map", "map:setgroups"} {
		want[k] = denied
	}
	want["link:/usr/bin/python3.11"] = "EXDEV|" + denied // another mount: no hard link into /workspace
	// The running interpreter (CVE-2019-5736 went through /proc/self/exe).
	want["open-write:/proc/self/exe"], want["open-write:/proc/1/exe"] = "ETXTBSY|"+denied, "ETXTBSY|"+denied
	m := parseMarkers(t, res)
	m.expect(t, want, "write:/workspace", "write:/tmp", "mkdir:/tmp")
	var writable []string
	m.infoAs(t, "writable", &writable)
	for _, p := range writable {
		switch {
		case p == "/workspace" || strings.HasPrefix(p, "/workspace/"),
			p == "/tmp" || strings.HasPrefix(p, "/tmp/"),
			p == "/dev/shm",                             // POSIX shared memory and semaphores: a tmpfs like /tmp (documented)
			p == sandbox.GuestOutDir,                    // the runner's outcome.json (documented)
			p == sandbox.GuestRunDir+"/"+rpc.SocketName, // the channel: W_OK on a socket is connect
			guestDevices[p] != "":
		default:
			t.Errorf("the guest can write %s", p)
		}
	}
	for _, p := range []string{"/workspace", "/tmp", "/dev/shm", "/workspace/apysup-escape-probe"} {
		if !slices.Contains(writable, p) {
			t.Errorf("the writable walk missed %s (found %v)", p, writable)
		}
	}
}
