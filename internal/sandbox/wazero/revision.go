package wazero

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/apysup/apysup/python/wasi"
)

// ErrorCodeRevisionMismatch is the typed reason when the WASI build and the
// host's python3.11 (the native guest's interpreter and stdlib) are of
// different Debian revisions: the two backends would run different
// standard libraries (re and csv differ between revisions).
const ErrorCodeRevisionMismatch = "wasi_python_revision_mismatch"

// RevisionFix is the one command that brings both to build.sh's revision.
const RevisionFix = "make deps wasi-python"

// DpkgStatus is where dpkg records the installed packages and versions.
const DpkgStatus = "/var/lib/dpkg/status"

// guestPackages are the host packages the native guest runs: the
// interpreter (python3.11-minimal) and the standard library (the other
// two). build.sh's PY_SRC_VERSION is their source's revision.
var guestPackages = []string{"python3.11-minimal", "libpython3.11-minimal", "libpython3.11-stdlib"}

// HostRevision is the Debian revision of the host's python3.11, read from
// a dpkg status file (DpkgStatus; "" means DpkgStatus). ok is false when
// the host has no python3.11 at all (no dpkg, or none of guestPackages
// installed): there is no native guest to differ from. Packages installed
// at different revisions (a half-finished upgrade) are an error.
func HostRevision(statusPath string) (rev string, ok bool, err error) {
	if statusPath == "" {
		statusPath = DpkgStatus
	}
	data, err := os.ReadFile(statusPath)
	if errors.Is(err, fs.ErrNotExist) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	versions := installedVersions(data, guestPackages)
	if len(versions) == 0 {
		return "", false, nil
	}
	var list []string
	for _, p := range guestPackages {
		if v, ok := versions[p]; ok {
			list = append(list, p+" "+v)
			if rev != "" && v != rev {
				return "", false, fmt.Errorf("the host's python3.11 packages are at different revisions (%s)", strings.Join(list, ", "))
			}
			rev = v
		}
	}
	return rev, true, nil
}

// installedVersions reads the Version of each wanted package whose Status
// is "install ok installed" from dpkg's status file: stanzas of
// "Field: value" lines separated by blank lines, continuation lines
// starting with a space. Architecture-qualified names (":amd64") are not
// used in the file itself. Lines end at "\n", a "\r" before it dropped (as
// bufio.ScanLines does). The file is hundreds of kilobytes on any host and
// every wazero Load reads it: the lines are read in place, nothing is
// allocated for a stanza that is not wanted.
func installedVersions(data []byte, wanted []string) map[string]string {
	found := map[string]string{}
	var pkg, status, version []byte
	flush := func() {
		if string(status) == "install ok installed" && len(version) > 0 {
			for _, p := range wanted {
				if string(pkg) == p {
					found[p] = string(version)
				}
			}
		}
		pkg, status, version = nil, nil, nil
	}
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(bytes.TrimSpace(line)) == 0 {
			flush()
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			continue
		}
		field, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		value = bytes.TrimSpace(value)
		switch string(field) {
		case "Package":
			pkg = value
		case "Status":
			status = value
		case "Version":
			version = value
		}
	}
	flush()
	return found
}

// CheckRevision refuses a WASI build whose python3.11 revision is not the
// host's (an *UnavailableError with ErrorCodeRevisionMismatch that names
// both and the fix). A host without python3.11 passes: the wazero backend
// then runs alone. statusPath is as for HostRevision.
func CheckRevision(b *Build, statusPath string) error {
	built := b.Manifest.Source["python3.11"]
	host, ok, err := HostRevision(statusPath)
	if err != nil {
		return &UnavailableError{Code: ErrorCodeRevisionMismatch, Reason: err.Error() + ": run `" + RevisionFix + "`"}
	}
	if !ok || host == built {
		return nil
	}
	return &UnavailableError{Code: ErrorCodeRevisionMismatch, Reason: RevisionMismatch(built, host)}
}

// RevisionMismatch is the message of ErrorCodeRevisionMismatch.
func RevisionMismatch(built, host string) string {
	return fmt.Sprintf("the WASI build is python3.11 %s, the host's guest interpreter is %s: run `%s`", built, host, RevisionFix)
}

// PinnedRevision is the python3.11 revision the embedded build inputs
// build (build.sh's PY_SRC_VERSION): what the WASI build is, or will be
// once built.
func PinnedRevision() (string, error) {
	script, err := fs.ReadFile(wasi.Inputs, "build.sh")
	if err != nil {
		return "", err
	}
	const prefix = `PY_SRC_VERSION="`
	for _, line := range strings.Split(string(script), "\n") {
		if rest, ok := strings.CutPrefix(line, prefix); ok {
			if v, _, ok := strings.Cut(rest, `"`); ok && v != "" {
				return v, nil
			}
		}
	}
	return "", errors.New("build.sh sets no PY_SRC_VERSION")
}
