package wazero

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/apysup/apysup/python/wasi"
)

// status writes a fake dpkg status file with one stanza per "package
// version status" triple and returns its path.
func status(t *testing.T, stanzas ...[3]string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("Package: adduser\nStatus: install ok installed\nVersion: 3.134\nDescription: add users\n multi-line\n .\n more\n\n")
	for _, s := range stanzas {
		b.WriteString("Package: " + s[0] + "\nStatus: " + s[2] + "\nPriority: optional\nVersion: " + s[1] + "\nDepends: x (= 1)\n\n")
	}
	path := filepath.Join(t.TempDir(), "status")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

const installed = "install ok installed"

func TestHostRevision(t *testing.T) {
	for _, tc := range []struct {
		name    string
		path    string
		rev     string
		ok, err bool
	}{
		{"all three", status(t, [3]string{"python3.11-minimal", "3.11.2-6+deb12u8", installed},
			[3]string{"libpython3.11-minimal", "3.11.2-6+deb12u8", installed},
			[3]string{"libpython3.11-stdlib", "3.11.2-6+deb12u8", installed}), "3.11.2-6+deb12u8", true, false},
		{"removed ones do not count", status(t, [3]string{"python3.11-minimal", "3.11.2-6+deb12u9", installed},
			[3]string{"libpython3.11-stdlib", "3.11.2-6+deb12u6", "deinstall ok config-files"}), "3.11.2-6+deb12u9", true, false},
		{"half upgraded", status(t, [3]string{"python3.11-minimal", "3.11.2-6+deb12u9", installed},
			[3]string{"libpython3.11-stdlib", "3.11.2-6+deb12u6", installed}), "", false, true},
		{"no python3.11", status(t, [3]string{"python3-minimal", "3.11.2-1+b1", installed}), "", false, false},
		{"no dpkg", filepath.Join(t.TempDir(), "absent"), "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rev, ok, err := HostRevision(tc.path)
			if rev != tc.rev || ok != tc.ok || (err != nil) != tc.err {
				t.Fatalf("HostRevision = %q %v %v, want %q %v error %v", rev, ok, err, tc.rev, tc.ok, tc.err)
			}
		})
	}
}

// A mismatch is refused with the typed reason naming both revisions and
// the fix; a match, or a host without python3.11, passes.
func TestCheckRevision(t *testing.T) {
	build := &Build{Manifest: Manifest{Source: map[string]string{"python3.11": "3.11.2-6+deb12u8"}}}
	if err := CheckRevision(build, status(t, [3]string{"python3.11-minimal", "3.11.2-6+deb12u8", installed})); err != nil {
		t.Fatalf("same revision: %v", err)
	}
	if err := CheckRevision(build, status(t)); err != nil {
		t.Fatalf("no python3.11 on the host: %v", err)
	}
	for name, path := range map[string]string{
		"older host": status(t, [3]string{"libpython3.11-stdlib", "3.11.2-6+deb12u6", installed}),
		"half upgraded": status(t, [3]string{"python3.11-minimal", "3.11.2-6+deb12u8", installed},
			[3]string{"libpython3.11-stdlib", "3.11.2-6+deb12u9", installed}),
	} {
		err := CheckRevision(build, path)
		var u *UnavailableError
		if !errors.As(err, &u) || u.Code != ErrorCodeRevisionMismatch || !strings.Contains(err.Error(), "make deps wasi-python") {
			t.Fatalf("%s: %v, want an UnavailableError %s naming the fix", name, err, ErrorCodeRevisionMismatch)
		}
	}
	err := CheckRevision(build, status(t, [3]string{"libpython3.11-stdlib", "3.11.2-6+deb12u6", installed}))
	if want := "the WASI build is python3.11 3.11.2-6+deb12u8, the host's guest interpreter is 3.11.2-6+deb12u6: run `make deps wasi-python`"; !strings.HasSuffix(err.Error(), want) {
		t.Fatalf("%q does not end in %q", err, want)
	}
}

// Load refuses a build of another revision before reading or compiling
// anything: a cache holding only a manifest is enough to show it.
func TestLoadRefusesRevisionMismatch(t *testing.T) {
	key, err := BuildKey(wasi.Inputs)
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	dir := filepath.Join(cache, "apysup", "wasi", key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, _ := json.Marshal(Manifest{Key: key, Source: map[string]string{"python3.11": "3.11.2-6+deb12u8"},
		Files: map[string]ManifestFile{wasmFile: {}, stdlibFile: {}}})
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), m, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Load(context.Background(), Config{CacheDir: cache, CompilationCacheDir: t.TempDir(),
		DpkgStatus: status(t, [3]string{"python3.11-minimal", "3.11.2-6+deb12u9", installed})})
	var u *UnavailableError
	if !errors.As(err, &u) || u.Code != ErrorCodeRevisionMismatch {
		t.Fatalf("Load: %v, want an UnavailableError %s", err, ErrorCodeRevisionMismatch)
	}
}

// The Go side reads the same revision as build.sh builds and `make deps`
// installs.
func TestPinnedRevisionMatchesBuildScript(t *testing.T) {
	out, err := exec.Command("bash", "../../../python/wasi/build.sh", "--print-python-revision").Output()
	if err != nil {
		t.Fatalf("build.sh --print-python-revision: %v", err)
	}
	rev, err := PinnedRevision()
	if err != nil || rev != strings.TrimSpace(string(out)) || !strings.HasPrefix(rev, "3.11.") {
		t.Fatalf("PinnedRevision = %q %v, build.sh says %q", rev, err, out)
	}
}

func FuzzInstalledVersions(f *testing.F) {
	f.Add([]byte("Package: python3.11-minimal\nStatus: install ok installed\nVersion: 3.11.2-6+deb12u8\n\n"))
	f.Add([]byte("Package: libpython3.11-stdlib\nVersion:\nStatus: install ok installed\n \nPackage\n:\n\t x\n"))
	f.Add([]byte("Package: python3.11-minimal\r\nStatus: install ok installed \r\nVersion:\t3.11.2-6+deb12u8\r\n \t\nPackage: x\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got := installedVersions(data, guestPackages)
		for p, v := range got {
			if v == "" || !strings.Contains(string(data), p) || !strings.Contains(string(data), v) {
				t.Fatalf("%s = %q is not from the input", p, v)
			}
		}
		if want := scannedVersions(data, guestPackages); !maps.Equal(got, want) {
			t.Fatalf("installedVersions = %v, a line scanner reads %v", got, want)
		}
	})
}

// scannedVersions is installedVersions written another way, as the fuzz
// test's oracle: the file split into stanzas at blank lines (bufio.Scanner's
// lines, strings throughout), each stanza's fields into a map.
func scannedVersions(data []byte, wanted []string) map[string]string {
	found := map[string]string{}
	stanza := map[string]string{}
	end := func() {
		if p := stanza["Package"]; slices.Contains(wanted, p) && stanza["Status"] == "install ok installed" && stanza["Version"] != "" {
			found[p] = stanza["Version"]
		}
		clear(stanza)
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		switch line := sc.Text(); {
		case strings.TrimSpace(line) == "":
			end()
		case strings.HasPrefix(line, " "), strings.HasPrefix(line, "\t"):
		default:
			if field, value, ok := strings.Cut(line, ":"); ok {
				stanza[field] = strings.TrimSpace(value)
			}
		}
	}
	end()
	return found
}

// BenchmarkHostRevision is the revision check every wazero Load makes:
// this host's dpkg status file, read and scanned.
func BenchmarkHostRevision(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := HostRevision(""); err != nil {
			b.Fatal(err)
		}
	}
}
