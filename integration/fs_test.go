package integration

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
)

// TestHostSecretsAreInvisible plants a secret in the host's /root and /tmp;
// the guest walks its whole file system (names and the contents of small
// files) and tries the obvious paths, and must find nothing.
func TestHostSecretsAreInvisible(t *testing.T) {
	t.Parallel()
	need(t)
	name := "escape-canary-" + randomHex(t, 8)
	// The canary is spelled in pieces here too, so that no file the test
	// can leave around holds it whole.
	secret := []byte("APYSUP-HOST-" + "SECRET-CANARY " + randomHex(t, 16) + "\n")
	for _, dir := range []string{"/root", os.TempDir()} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, secret, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(p) })
	}
	// A positive control: the same secret, seeded into the workspace on
	// purpose, must be found (by name and by content), and nothing else.
	seed := t.TempDir()
	if err := os.WriteFile(filepath.Join(seed, name), secret, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(secret)
	res := run(t, supervisor.Request{ScriptPath: guestScript(t, "fswalk.py"), WorkspaceSeed: seed,
		Args: []string{name, hex.EncodeToString(sum[:])}, Limits: sandbox.Limits{Timeout: 120e9}})
	if res.Status != sandbox.StatusOK {
		t.Fatalf("guest: %s", summary(res))
	}
	m := parseMarkers(t, res)
	want := map[string]string{}
	for _, p := range []string{"/root/SECRET", "/tmp/SECRET", "/proc/1/root/root/SECRET", "/proc/1/root/tmp/SECRET",
		"/proc/self/cwd/../root/SECRET", "/../../root/SECRET", "/workspace/../root/SECRET", "/proc/1/cwd/../../root/SECRET"} {
		want["open:"+p] = "ENOENT"
	}
	for _, p := range []string{"/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/sudoers", "/root", "/home", "/var", "/srv",
		"/mnt", "/boot", "/sys", "/run/secrets", "/var/run/docker.sock", "/run/containerd"} {
		want["stat:"+p] = "ENOENT"
	}
	m.expect(t, want)
	var walk struct {
		Entries, Files, Read int
		Bytes                int64
		Truncated            bool
		Tops                 []string
		ReadOutsideUsr       []string `json:"read_outside_usr"`
	}
	var found [][2]string
	var sockets map[string]string
	m.infoAs(t, "walk", &walk)
	m.infoAs(t, "found", &found)
	m.infoAs(t, "sockets", &sockets)
	t.Logf("walk: %d entries, %d files, %d read (%d bytes), truncated %v, top level %v, read outside /usr %v",
		walk.Entries, walk.Files, walk.Read, walk.Bytes, walk.Truncated, walk.Tops, walk.ReadOutsideUsr)
	control := "/workspace/" + name
	if fmt.Sprint(found) != fmt.Sprint([][2]string{{"name", control}, {"content", control}}) {
		t.Errorf("the guest found %v; want only the seeded control %s (by name and content)", found, control)
	}
	// Not vacuous: the walk covered the guest's root, /usr included.
	if walk.Truncated || walk.Files < 1000 || walk.Read < 500 {
		t.Errorf("the walk covered too little: %+v", walk)
	}
	for _, p := range []string{"/etc/passwd", "/run/apysup/channel.json", "/opt/apysup/apysup_runner.py", "/run/apysup/job/fswalk.py"} {
		if !slices.Contains(walk.ReadOutsideUsr, p) {
			t.Errorf("the walk did not read %s", p)
		}
	}
	for _, top := range []string{"usr", "etc", "tmp", "workspace", "opt", "run"} {
		if !strings.Contains(strings.Join(walk.Tops, " ")+" ", top+" ") {
			t.Errorf("the walk did not see /%s (top level %v)", top, walk.Tops)
		}
	}
	for _, top := range walk.Tops {
		if top == "root" || top == "home" || top == "var" || top == "srv" || top == "mnt" || top == "boot" || top == "sys" {
			t.Errorf("the guest's root holds the host directory /%s", top)
		}
	}
	// The only socket in reach is the run's channel.
	channel := sandbox.GuestRunDir + "/" + rpc.SocketName
	if len(sockets) != 1 || sockets[channel] != "connected" {
		t.Errorf("Unix sockets in the guest's file system: %v, want only %s (connected)", sockets, channel)
	}
}
