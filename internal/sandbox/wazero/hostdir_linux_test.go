package wazero

import (
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	experimentalsys "github.com/tetratelabs/wazero/experimental/sys"
)

// hostTree is a read-only host directory with symlinks that stay inside
// and symlinks that leave it for a secret beside it.
func hostTree(t *testing.T) (dir, secret string) {
	t.Helper()
	base := t.TempDir()
	dir = filepath.Join(base, "zoneinfo")
	secret = filepath.Join(base, "secret")
	for _, d := range []string{"Europe", "right/Europe", "right/Canada"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, data := range map[string]string{"Europe/Berlin": "berlin", "right/Europe/Berlin": "right berlin", "UTC": "utc"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(secret, []byte("host secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for link, target := range map[string]string{
		"localtime":           secret,              // absolute, out
		"etc":                 "/etc",              // absolute, a directory out
		"right/Canada/Berlin": "../Europe/Berlin",  // relative, inside
		"right/Canada/Out":    "../../../secret",   // relative, climbing out
		"right/Canada/Dotdot": "../../../zoneinfo", // out, then back in by name
		"Zulu":                "UTC",               // a chain: Z -> Zulu -> UTC
		"Z":                   "Zulu",
		"Eu":                  "Europe", // a directory, inside
		"proc":                "/proc/self/root",
		"loop":                "loop",
	} {
		if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
			t.Fatal(err)
		}
	}
	return dir, secret
}

func TestHostDirResolvesInside(t *testing.T) {
	dir, _ := hostTree(t)
	d, err := openHostDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	m := d.FS()
	read := func(name string) (string, experimentalsys.Errno) { return readAll(t, m, name) }
	for name, want := range map[string]string{
		"UTC":                 "utc",
		"Z":                   "utc",
		"right/Canada/Berlin": "right berlin",
		"Eu/Berlin":           "berlin",
	} {
		if got, errno := read(name); errno != 0 || got != want {
			t.Errorf("read %s: %q %v, want %q", name, got, errno, want)
		}
	}
	for name, want := range map[string]experimentalsys.Errno{
		"localtime":           experimentalsys.ENOENT,
		"etc/passwd":          experimentalsys.ENOENT,
		"etc":                 experimentalsys.ENOENT,
		"right/Canada/Out":    experimentalsys.ENOENT,
		"right/Canada/Dotdot": experimentalsys.ENOENT,
		"../secret":           experimentalsys.ENOENT,
		"Eu/../../secret":     experimentalsys.ENOENT,
		"proc/etc/passwd":     experimentalsys.ENOENT,
		"loop":                experimentalsys.ELOOP,
		"absent":              experimentalsys.ENOENT,
	} {
		if got, errno := read(name); errno != want {
			t.Errorf("read %s: %q %v, want %v", name, got, errno, want)
		}
		if _, errno := m.Stat(name); errno != want {
			t.Errorf("stat %s: %v, want %v", name, errno, want)
		}
	}
	// A link itself is seen and read, wherever it points, as natively.
	if st, errno := m.Lstat("localtime"); errno != 0 || st.Mode&fs.ModeSymlink == 0 {
		t.Errorf("lstat localtime: %v %v", st.Mode, errno)
	}
	if target, errno := m.Readlink("right/Canada/Out"); errno != 0 || target != "../../../secret" {
		t.Errorf("readlink: %q %v", target, errno)
	}
	if _, errno := m.Readlink("UTC"); errno != experimentalsys.EINVAL {
		t.Errorf("readlink of a file: %v, want EINVAL", errno)
	}
	if st, errno := m.Stat("Eu"); errno != 0 || !st.Mode.IsDir() {
		t.Errorf("stat Eu: %v %v", st.Mode, errno)
	}
	if _, errno := m.OpenFile("Z", experimentalsys.O_RDONLY|experimentalsys.O_NOFOLLOW, 0o600); errno != experimentalsys.ELOOP {
		t.Errorf("O_NOFOLLOW on a link: %v, want ELOOP", errno)
	}
	// A directory lists, rewinds (which reopens it beneath the root) and
	// lists again.
	f, errno := m.OpenFile("Eu", experimentalsys.O_RDONLY|experimentalsys.O_DIRECTORY, 0o600)
	if errno != 0 {
		t.Fatal(errno)
	}
	for range 2 {
		ents, errno := f.Readdir(-1)
		if errno != 0 || len(ents) != 1 || ents[0].Name != "Berlin" {
			t.Fatalf("readdir: %v %v", ents, errno)
		}
		if _, errno := f.Seek(0, io.SeekStart); errno != 0 {
			t.Fatal(errno)
		}
	}
	f.Close()
	// Read-only: nothing is written, made or removed.
	if _, errno := m.OpenFile("UTC", experimentalsys.O_RDWR, 0o600); errno == 0 {
		t.Error("opened for writing")
	}
	if _, errno := m.OpenFile("new", experimentalsys.O_CREAT|experimentalsys.O_WRONLY, 0o600); errno == 0 {
		t.Error("created a file")
	}
	for name, errno := range map[string]experimentalsys.Errno{
		"mkdir":  m.Mkdir("new", 0o755),
		"unlink": m.Unlink("UTC"),
		"rename": m.Rename("UTC", "X"),
		"link":   m.Symlink("UTC", "X"),
	} {
		if errno == 0 {
			t.Errorf("%s allowed", name)
		}
	}
}

// /usr/share/zoneinfo/localtime is a host symlink to /etc/localtime: the
// guest reads the host's /etc through it no more.
func TestZoneinfoSymlinkOutIsDangling(t *testing.T) {
	target, err := os.Readlink(filepath.Join(zoneinfoDir, "localtime"))
	if err != nil || !filepath.IsAbs(target) {
		t.Skipf("%s/localtime is no absolute symlink on this host", zoneinfoDir)
	}
	out := run(t, probePy+`import json, zoneinfo, datetime
z = "/usr/share/zoneinfo/"
print(json.dumps({
    "read localtime": probe(lambda: len(open(z + "localtime", "rb").read())),
    "stat localtime": probe(lambda: os.stat(z + "localtime").st_size),
    "islink localtime": os.path.islink(z + "localtime"),
    "readlink localtime": probe(lambda: os.readlink(z + "localtime")),
    "inside": open(z + "right/Pacific/Yap", "rb").read() == open(z + "right/Pacific/Port_Moresby", "rb").read(),
    "climbing inside": str(zoneinfo.ZoneInfo("right/Canada/Pacific").utcoffset(datetime.datetime(2024, 1, 1))),
}, sort_keys=True))
`, runOpts{})
	got := guestJSON(t, out)
	want := map[string]any{
		"read localtime":     "FileNotFoundError ENOENT",
		"stat localtime":     "FileNotFoundError ENOENT",
		"islink localtime":   true,
		"readlink localtime": target,
		"inside":             true,
		"climbing inside":    "-1 day, 16:00:00",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v", k, got[k], v)
		}
	}
}

// Every way out of a read-only host mount, against a host secret beside it.
func TestHostMountStaysInside(t *testing.T) {
	dir, secret := hostTree(t)
	d, err := openHostDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	in := *interpreter(t)
	in.zoneinfo = d
	out := run(t, probePy+`import json
z = "/usr/share/zoneinfo/"
r = {}
for name in ["localtime", "etc/passwd", "right/Canada/Out", "right/Canada/Dotdot/UTC", "proc/etc/passwd", "Eu/../../secret"]:
    r[name] = probe(lambda: open(z + name, "rb").read().decode())
for name in ["Z", "right/Canada/Berlin", "Eu/Berlin"]:
    r[name] = open(z + name).read()
r["listdir"] = sorted(os.listdir(z + "Eu"))
r["write"] = probe(lambda: open(z + "UTC", "w"))
r["create"] = probe(lambda: open(z + "new", "w"))
print(json.dumps(r, sort_keys=True))
`, runOpts{in: &in})
	if strings.Contains(string(out.Stdout), "host secret") {
		t.Fatalf("the guest read the host's secret %s: %s", secret, out.Stdout)
	}
	got := guestJSON(t, out)
	for k, want := range map[string]string{
		"localtime":               "FileNotFoundError ENOENT",
		"etc/passwd":              "FileNotFoundError ENOENT",
		"right/Canada/Out":        "FileNotFoundError ENOENT",
		"right/Canada/Dotdot/UTC": "FileNotFoundError ENOENT",
		"proc/etc/passwd":         "FileNotFoundError ENOENT",
		"Eu/../../secret":         "FileNotFoundError ENOENT", // /usr/share/secret, resolved as the kernel would (_apysup_paths.c)
		"Z":                       "utc",
		"right/Canada/Berlin":     "right berlin",
		"Eu/Berlin":               "berlin",
	} {
		if got[k] != want {
			t.Errorf("%s = %v, want %v", k, got[k], want)
		}
	}
	if b, _ := json.Marshal(got["listdir"]); string(b) != `["Berlin"]` {
		t.Errorf("listdir %s", b)
	}
	for _, k := range []string{"write", "create"} {
		if s, _ := got[k].(string); !strings.Contains(s, "Error") {
			t.Errorf("%s = %v, want refused", k, got[k])
		}
	}
}
