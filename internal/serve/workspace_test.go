package serve

import (
	"archive/tar"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apysup/apysup/internal/sandbox"
)

// tarEntry is one entry of a test archive: a header and, for a file, its
// content.
type tarEntry struct {
	hdr  tar.Header
	data string
}

func file(name, data string) tarEntry {
	return tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data))}, data}
}

func dir(name string) tarEntry {
	return tarEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: name, Mode: 0o755}}
}

func makeTar(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		if err := tw.WriteHeader(&e.hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(e.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func codeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

func TestSeedFromTar(t *testing.T) {
	const (
		invalid  = sandbox.CodeWorkspaceInputInvalid
		tooLarge = sandbox.CodeWorkspaceTooLarge
		badTar   = CodeWorkspaceTarInvalid
	)
	withMode := func(e tarEntry, mode int64) tarEntry { e.hdr.Mode = mode; return e }
	typed := func(name string, flag byte, link string) tarEntry {
		return tarEntry{hdr: tar.Header{Typeflag: flag, Name: name, Linkname: link, Mode: 0o644}}
	}
	many := make([]tarEntry, MaxWorkspaceFiles+1)
	for i := range many {
		many[i] = file(strings.Repeat("d/", i%3)+"f"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("y", i/26), "")
	}
	valid := makeTar(t, file("a.txt", "hi"))
	for _, tc := range []struct {
		name string
		tar  []byte
		want string
	}{
		{"files and directories", makeTar(t, dir("./"), dir("./src/"), file("./src/main.py", "print(1)"), dir("empty"), file("top", "")), ""},
		{"a directory named after its files", makeTar(t, file("d/f", "x"), dir("d/")), ""},
		{"git archive's global header", makeTar(t, tarEntry{hdr: tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "pax_global_header",
			PAXRecords: map[string]string{"comment": "0123abcd"}}}, file("a", "b")), ""},
		{"empty archive", makeTar(t), ""},
		{"absolute path", makeTar(t, file("/etc/passwd", "x")), invalid},
		{"parent", makeTar(t, file("../x", "x")), invalid},
		{"parent inside", makeTar(t, file("a/../../x", "x")), invalid},
		{"dot-dot only", makeTar(t, dir("../")), invalid},
		{"unclean", makeTar(t, file("a//b", "x")), invalid},
		{"backslash", makeTar(t, file(`a\..\b`, "x")), invalid},
		{"control character", makeTar(t, file("a\nb", "x")), invalid},
		{"not UTF-8", makeTar(t, file("a\xffb", "x")), invalid},
		{"symlink", makeTar(t, typed("l", tar.TypeSymlink, "/etc/passwd")), invalid},
		{"hard link", makeTar(t, file("a", "x"), typed("b", tar.TypeLink, "a")), invalid},
		{"hard link out", makeTar(t, typed("b", tar.TypeLink, "/etc/shadow")), invalid},
		{"character device", makeTar(t, typed("null", tar.TypeChar, "")), invalid},
		{"block device", makeTar(t, typed("sda", tar.TypeBlock, "")), invalid},
		{"fifo", makeTar(t, typed("p", tar.TypeFifo, "")), invalid},
		{"file given twice", makeTar(t, file("a", "1"), file("a", "2")), invalid},
		{"directory given twice", makeTar(t, dir("d"), dir("d/")), invalid},
		{"file and directory", makeTar(t, file("a", "1"), dir("a")), invalid},
		{"file under a file", makeTar(t, file("a", "1"), file("a/b", "2")), invalid},
		{"file over a directory", makeTar(t, file("a/b", "2"), file("a", "1")), invalid},
		{"case twins", makeTar(t, file("Makefile", "1"), file("makefile", "2")), invalid},
		{"case twins by directory", makeTar(t, file("Src/a", "1"), file("src/b", "2")), invalid},
		{"normalisation twins", makeTar(t, file("caf\u00e9", "1"), file("cafe\u0301", "2")), invalid},
		{"folding twins", makeTar(t, file("stra\u00dfe", "1"), file("strasse", "2")), invalid},
		{"too many entries", makeTar(t, many...), tooLarge},
		{"too many bytes", makeTar(t, file("big", strings.Repeat("x", MaxWorkspaceBytes+1))), tooLarge},
		{"too many bytes in all", makeTar(t, file("a", strings.Repeat("x", MaxWorkspaceBytes/2+1)), file("b", strings.Repeat("x", MaxWorkspaceBytes/2))), tooLarge},
		{"not a tar", []byte("hello, this is not a tar archive at all, but it is long enough" + strings.Repeat(".", 600)), badTar},
		{"truncated", makeTar(t, file("a.txt", strings.Repeat("x", 100)))[:600], badTar},
		{"garbage after the end", append(append([]byte{}, valid...), "#!/bin/sh\n"...), badTar},
		{"second archive after the end", append(append([]byte{}, valid...), valid...), badTar},
		{"set-id bits", makeTar(t, withMode(file("s", "x"), 0o6777)), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := seedFromTar(tc.tar)
			if got := codeOf(err); got != tc.want {
				t.Fatalf("code %q (%v), want %q", got, err, tc.want)
			}
			if err != nil {
				if e := err.(*Error); strings.Contains(e.Message, "passwd") || strings.Contains(e.Message, "..") {
					t.Errorf("the refusal quotes the archive: %q", e.Message)
				}
				return
			}
			for _, e := range s.entries {
				if !validWorkspacePath(e.path) || e.perm&^0o755 != 0 {
					t.Errorf("accepted %q with mode %v", e.path, e.perm)
				}
			}
		})
	}
}

// TestSeedWrite: an accepted archive is written as it says, modes masked,
// and nothing outside the seed directory.
func TestSeedWrite(t *testing.T) {
	s, err := seedFromTar(makeTar(t,
		dir("./"), tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: "./run.sh", Mode: 0o775, Size: 10}, "#!/bin/sh\n"}, dir("lib/"), file("lib/x.py", "x = 1\n"),
		tarEntry{tar.Header{Typeflag: tar.TypeReg, Name: "lib/secret", Mode: 0o6777, Size: 1}, "s"},
		tarEntry{hdr: tar.Header{Typeflag: tar.TypeDir, Name: "ro", Mode: 0o500}}, dir("empty/"),
		file("deep/er/file", "d")))
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	target := filepath.Join(root, "seed")
	if err := s.write(target); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"run.sh": "-rwxr-xr-x", "lib": "drwxr-xr-x", "lib/x.py": "-rw-r--r--", "lib/secret": "-rwxr-xr-x",
		"ro": "drwx------", "empty": "drwxr-xr-x", "deep": "drwx------", "deep/er": "drwx------", "deep/er/file": "-rw-r--r--",
	}
	got := map[string]string{}
	err = filepath.WalkDir(target, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == target {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(target, p)
		got[filepath.ToSlash(rel)] = info.Mode().String()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for p, m := range want {
		if got[p] != m {
			t.Errorf("%s: %q, want %q", p, got[p], m)
		}
	}
	if len(got) != len(want) {
		t.Errorf("written %v, want %v", got, want)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 1 {
		t.Errorf("written outside the seed directory: %v", entries)
	}
}

// TestRunRequestWorkspaceForms: a run takes a file map or a tar, not both,
// and the file map follows the tar's rules.
func TestRunRequestWorkspaceForms(t *testing.T) {
	archive := base64.StdEncoding.EncodeToString(makeTar(t, file("a.py", "print(1)")))
	for _, tc := range []struct {
		body, want string
	}{
		{`{"source": "x", "workspace_tar": "` + archive + `"}`, ""},
		{`{"source": "x", "workspace": {"a": ""}, "workspace_tar": "` + archive + `"}`, CodeInvalidRequest},
		{`{"source": "x", "workspace_tar": "not base64!"}`, CodeInvalidRequest},
		{`{"source": "x", "workspace_tar": "aGVsbG8="}`, CodeWorkspaceTarInvalid},
		{`{"source": "x", "workspace": {"A": "", "a": ""}}`, sandbox.CodeWorkspaceInputInvalid},
		{`{"source": "x", "workspace": {"a": "", "a/b": ""}}`, sandbox.CodeWorkspaceInputInvalid},
	} {
		v, err := ParseRunRequest([]byte(tc.body))
		if got := codeOf(err); got != tc.want {
			t.Errorf("%s: code %q (%v), want %q", tc.body, got, err, tc.want)
		}
		if err == nil && (v.seed == nil || len(v.seed.entries) != 1) {
			t.Errorf("%s: seed %+v", tc.body, v.seed)
		}
	}
}

// TestRunRequestIsStrictJSON: a body that two parsers could read
// differently is refused (encoding/json kept the last of two keys and
// replaced invalid UTF-8 and lone surrogates with U+FFFD), and so is a
// script name with a control character (a newline split a traceback's
// line in two); a manifest carried inside may nest as deeply as one
// posted alone.
func TestRunRequestIsStrictJSON(t *testing.T) {
	deep := `{"schema_version": "apysup.manifest.v1", "x": ` + strings.Repeat(`[`, 62) + strings.Repeat(`]`, 62) + `}`
	for _, tc := range []struct {
		body, want string
	}{
		{`{"source": "print(1)", "source": "print(2)"}`, CodeInvalidRequest},
		{`{"source": "x", "idempotency_key": "a", "idempotency_key": "b"}`, CodeInvalidRequest},
		{"{\"source\": \"print(\xff)\"}", CodeInvalidRequest},
		{`{"source": "print('\ud800')"}`, CodeInvalidRequest},
		{`{"source": "x", "script_name": "a\nb.py"}`, CodeInvalidRequest},
		{`{"source": "x", "script_name": "a\u001b.py"}`, CodeInvalidRequest},
		{`{"source": "x", "script_name": "caf\u00e9 1.py"}`, ""},
		{`{"Source": "x"}`, CodeInvalidRequest}, // encoding/json alone takes it for "source"
		{`{"source": "x", "limits": {"Timeout_MS": 5}}`, CodeInvalidRequest},
		{`{"source": "x", "manifest": ` + deep + `}`, "not " + CodeInvalidRequest},
	} {
		_, err := ParseRunRequest([]byte(tc.body))
		got := codeOf(err)
		if want, not := strings.CutPrefix(tc.want, "not "); not && got == want || !not && got != tc.want {
			t.Errorf("%s: code %q (%v), want %q", tc.body, got, err, tc.want)
		}
	}
}

// FuzzSeedFromTar: any archive is refused with a typed code that does not
// quote it, or accepted as entries that each land where their clean,
// relative path says, distinct even on a case-insensitive file system,
// within the bounds, with masked modes.
func FuzzSeedFromTar(f *testing.F) {
	for _, seed := range [][]tarEntry{
		{file("a.txt", "hi"), dir("d/"), file("d/b", "x")},
		{dir("./"), file("./x", "")},
		{file("../x", "")},
		{file("/abs", "")},
		{file("A", ""), file("a", "")},
		{file("a", ""), file("a/b", "")},
		{{hdr: tar.Header{Typeflag: tar.TypeSymlink, Name: "l", Linkname: "/"}}},
		{{hdr: tar.Header{Typeflag: tar.TypeLink, Name: "l", Linkname: "a"}}},
		{{hdr: tar.Header{Typeflag: tar.TypeChar, Name: "c", Devmajor: 1, Devminor: 3}}},
		{{hdr: tar.Header{Typeflag: tar.TypeReg, Name: "p", Size: 1, PAXRecords: map[string]string{"path": "../p"}}, data: "x"}},
	} {
		f.Add(makeTar(f, seed...))
	}
	f.Add([]byte{})
	f.Add(makeTar(f, file("a", "x"))[:600])
	f.Fuzz(func(t *testing.T, archive []byte) {
		s, err := seedFromTar(archive)
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Code == "" {
				t.Fatalf("untyped refusal: %v", err)
			}
			return
		}
		if len(s.entries) > MaxWorkspaceFiles || s.bytes > MaxWorkspaceBytes {
			t.Fatalf("accepted %d entries, %d bytes", len(s.entries), s.bytes)
		}
		folded := map[string]bool{}
		for _, e := range s.entries {
			if !validWorkspacePath(e.path) || path.IsAbs(e.path) || strings.Contains("/"+e.path+"/", "/../") {
				t.Fatalf("accepted path %q", e.path)
			}
			if e.perm&^0o755 != 0 || (e.dir && e.perm&0o700 != 0o700) || e.perm&0o600 != 0o600 {
				t.Fatalf("accepted mode %v for %q", e.perm, e.path)
			}
			if k := foldPath(e.path); folded[k] {
				t.Fatalf("accepted %q twice", e.path)
			} else {
				folded[k] = true
			}
		}
		// It fits in a run request and parses there the same way.
		body, _ := json.Marshal(RunRequest{Source: "pass", WorkspaceTar: archive})
		if v, err := ParseRunRequest(body); len(archive) > 0 && (err != nil || v.seed == nil) {
			t.Fatalf("accepted alone, refused in a request: %v", err)
		}
	})
}
