package regrtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

const (
	pythonPath    = "/usr/bin/python3.11"
	stdlibTestDir = "/usr/lib/python3.11/test" // test/__init__.py and test.support (libpython3.11-stdlib)
	reportPrefix  = "REGRTEST-JSON "
)

// testsuiteDir holds the test modules: Debian's libpython3.11-testsuite
// installs them next to test.support; APYSUP_REGRTEST_TESTSUITE names an
// unpacked copy (dpkg -x) instead.
func testsuiteDir() string {
	if d := os.Getenv("APYSUP_REGRTEST_TESTSUITE"); d != "" {
		return d
	}
	return stdlibTestDir
}

// limits of every confined run: generous, since a limit hit here is a
// finding about the limit, not about the module. The timeout bounds a
// module that hangs.
func limits(backend string) sandbox.Limits {
	l := sandbox.Limits{
		Timeout: 10 * time.Minute, MemoryBytes: 2 << 30, Pids: 512, CPUs: 1,
		TmpBytes: 512 << 20, OutputBytes: 32 << 20, OpenFiles: 4096, FileSizeBytes: 1 << 30,
		WorkspaceBytes: 1 << 30, WorkspaceFiles: 65536,
	}
	if backend == supervisor.BackendWazero {
		l.Timeout = 20 * time.Minute
	}
	return l
}

// moduleRun is one module's run on one side.
type moduleRun struct {
	Seconds float64            `json:"seconds"` // in the guest: import and run of the module
	Tests   map[string]outcome `json:"tests"`
	wall    time.Duration      // the whole run, from the host
}

// buildSeed makes the workspace seed: dir/test holds test/__init__.py,
// test.support (from the testsuite directory first), every helper and data
// file of the testsuite (what is not a test_* module), the chosen modules
// and every test module they import, and what those import in turn
// (test_import imports test.test_importlib, whose source tests import
// test.test_py_compile).
func buildSeed(dir string, modules []string) error {
	suite := testsuiteDir()
	var wanted []string
	for _, dir := range []string{suite, stdlibTestDir} {
		entries, err := os.ReadDir(dir)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if n := e.Name(); !strings.HasPrefix(n, "test_") && n != "__pycache__" {
				wanted = append(wanted, n)
			}
		}
	}
	chosen := map[string]bool{}
	for _, m := range modules {
		chosen[m] = true
	}
	seen := map[string]bool{}
	queue := append([]string(nil), modules...)
	for len(queue) > 0 {
		m := queue[0]
		queue = queue[1:]
		if seen[m] {
			continue
		}
		seen[m] = true
		deps, entry, err := testModuleImports(dir, suite, m, chosen[m])
		if err != nil {
			return err
		}
		wanted = append(wanted, entry)
		queue = append(queue, deps...)
	}
	dst := filepath.Join(dir, "test")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	done := map[string]bool{}
	for _, name := range wanted {
		if done[name] {
			continue
		}
		done[name] = true
		src := ""
		for _, from := range []string{suite, stdlibTestDir} {
			if _, err := os.Lstat(filepath.Join(from, name)); err == nil {
				src = filepath.Join(from, name)
				break
			}
		}
		if src == "" {
			return fmt.Errorf("regrtest: %s is in neither %s nor %s", name, suite, stdlibTestDir)
		}
		if err := copyEntry(src, filepath.Join(dst, name)); err != nil {
			return err
		}
	}
	return nil
}

// testModuleImports reads test module m of suite (test_x.py, or the
// package test_x) and returns the test modules it imports and its entry in
// the test directory. A chosen module's source counts every mention
// (siblingImport: test_float calls test.test_grammar's helpers through an
// attribute), and its stdlib packages' own tests (unittest.test) are copied
// into seed's stdlibTestsDir, with the test modules they import; a
// package's files and what the chosen modules import count only import
// statements (siblingImportStatement), since they also name modules they
// make.
func testModuleImports(seed, suite, m string, chosen bool) (deps []string, entry string, _ error) {
	var found [][]string
	add := func(re *regexp.Regexp, root string) error {
		return filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || !strings.HasSuffix(p, ".py") {
				return err
			}
			b, err := os.ReadFile(p)
			found = append(found, re.FindAllStringSubmatch(string(b), -1)...)
			return err
		})
	}
	if info, statErr := os.Stat(filepath.Join(suite, m)); statErr == nil && info.IsDir() {
		entry = m
		if err := add(siblingImportStatement, filepath.Join(suite, m)); err != nil {
			return nil, "", err
		}
	} else {
		entry = m + ".py"
		src, err := os.ReadFile(filepath.Join(suite, entry))
		if err != nil {
			return nil, "", err
		}
		if !chosen {
			found = siblingImportStatement.FindAllStringSubmatch(string(src), -1)
		} else {
			found = siblingImport.FindAllStringSubmatch(string(src), -1)
			for _, pkg := range stdlibTestsImport.FindAllStringSubmatch(string(src), -1) {
				// A stdlib package's own tests (unittest.test): the
				// testsuite package installs them beside the test
				// package.
				rel := filepath.Join(pkg[1], pkg[2])
				from := filepath.Join(filepath.Dir(suite), rel)
				if err := copyEntry(from, filepath.Join(seed, stdlibTestsDir, rel)); err != nil {
					return nil, "", err
				}
				if err := add(siblingImportStatement, from); err != nil {
					return nil, "", err
				}
			}
		}
	}
	for _, dep := range found {
		if dep[1] != m {
			deps = append(deps, dep[1])
		}
	}
	return deps, entry, nil
}

// siblingImport finds "test.test_x" and "from test import test_x" in a
// test module's source (not "unittest.test.test_x").
var siblingImport = regexp.MustCompile(`(?m)(?:(?:^|[^.\w])test\.|^from test import )(test_\w+)`)

// siblingImportStatement finds only import statements of test modules,
// for a stdlib package's tests, which name test modules they make
// ("test.test_this_does_not_exist()").
var siblingImportStatement = regexp.MustCompile(`(?m)^\s*(?:import test\.|from test\.|from test import )(test_\w+)`)

// stdlibTestsImport finds "import unittest.test" in a test module's
// source: a stdlib package's own test package, which the seed carries in
// stdlibTestsDir and driver.py puts first on the package's __path__ (the
// WASI build's stdlib zip, like a host without the testsuite package, has
// none).
var stdlibTestsImport = regexp.MustCompile(`(?m)^(?:import|from) ([a-z]\w*)\.(tests?)\b`)

// stdlibTestsDir is the seed's directory of stdlib packages' test
// packages (stdlib-tests/unittest/test); its name is no module name.
const stdlibTestsDir = "stdlib-tests"

// copyEntry copies a file or a directory tree, skipping __pycache__ and
// anything that is neither a regular file nor a directory. A file keeps its
// execute bits (test_zipfile runs its ziptestdata/exe_with_zip).
func copyEntry(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir() && d.Name() == "__pycache__":
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644|info.Mode().Perm()&0o111)
		}
		return nil
	})
}

// runBare runs driver.py on module with Debian's interpreter, unconfined,
// in a fresh copy of the seed, as the sandboxes run it: isolated, no site,
// the guest's environment.
func runBare(ctx context.Context, driver, seed, module string) moduleRun {
	began := time.Now()
	dir, err := os.MkdirTemp(bareTempRoot(), "apysup-regrtest-")
	if err != nil {
		return failed(module, began, err.Error())
	}
	defer os.RemoveAll(dir)
	if err := copyEntry(seed, dir); err != nil {
		return failed(module, began, err.Error())
	}
	ctx, cancel := context.WithTimeout(ctx, limits(supervisor.BackendNative).Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, pythonPath, "-I", "-S", driver, module)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir, "LANG=C.UTF-8", "PYTHONHASHSEED=0",
		"PYTHONDONTWRITEBYTECODE=1", "PYTHONUTF8=1", "TMPDIR=" + dir}
	// A timeout ends the module's whole process group (tests fork).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	if r, ok := parseReport(stdout.String(), module); ok {
		r.wall = time.Since(began)
		return r
	}
	why := "no report"
	if err != nil {
		why = err.Error()
	}
	if ctx.Err() != nil {
		why = "timeout"
	}
	return failed(module, began, why+": "+lastLine(stderr.String()))
}

// bareTempRoot is where a bare run's directory goes: a tmpfs when the
// host has one at /dev/shm, as the sandboxes' /workspace and /tmp are, so
// that the timings compare the interpreters and not the disks.
func bareTempRoot() string {
	var st syscall.Statfs_t
	const tmpfsMagic = 0x01021994
	if syscall.Statfs("/dev/shm", &st) == nil && st.Type == tmpfsMagic && syscall.Access("/dev/shm", 2) == nil {
		return "/dev/shm"
	}
	return ""
}

// runConfined runs driver.py on module through the Supervisor, with an
// empty Plan: the tests call no capability.
func runConfined(ctx context.Context, sup *supervisor.Supervisor, backend, driver, seed, module string) moduleRun {
	began := time.Now()
	r, err := plan.NewRegistry(1)
	if err != nil {
		return failed(module, began, err.Error())
	}
	p, err := r.Seal()
	if err != nil {
		return failed(module, began, err.Error())
	}
	res, err := sup.Run(ctx, supervisor.Request{
		Plan: p, Handlers: broker.NewHandlers(), Surface: plan.SurfaceProgrammatic, Parent: "main",
		Backend: backend, BackendSource: "flag",
		ScriptPath: driver, Args: []string{module}, WorkspaceSeed: seed, Limits: limits(backend),
	})
	if err != nil {
		return failed(module, began, err.Error())
	}
	if out, ok := parseReport(res.Stdout, module); ok {
		out.wall = time.Since(began)
		return out
	}
	why := fmt.Sprintf("status %s %s exit %d", res.Status, res.ErrorCode, res.ExitCode)
	return failed(module, began, why+": "+lastLine(res.Stderr))
}

// failed is a run without a report: one module-level error entry.
func failed(module string, began time.Time, why string) moduleRun {
	return moduleRun{Tests: map[string]outcome{module: {Outcome: "error", Detail: "no report: " + why}}, wall: time.Since(began)}
}

// parseReport finds driver.py's report line and returns module's run.
func parseReport(stdout, module string) (moduleRun, bool) {
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), reportPrefix)
		if !ok {
			continue
		}
		var report struct {
			Modules map[string]moduleRun `json:"modules"`
		}
		if err := json.Unmarshal([]byte(line), &report); err != nil {
			return moduleRun{}, false
		}
		r, ok := report.Modules[module]
		if r.Tests == nil {
			r.Tests = map[string]outcome{}
		}
		return r, ok
	}
	return moduleRun{}, false
}

func lastLine(s string) string {
	s = strings.TrimRight(s, "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = strings.ToValidUTF8(s[:200], "")
	}
	return s
}

// readModules reads modules.txt: every module, and the fast ones.
func readModules(path string) (all, fast []string, err error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if !strings.HasPrefix(fields[0], "test_") || len(fields) > 2 || (len(fields) == 2 && fields[1] != "fast") {
			return nil, nil, errors.New("modules.txt: a line is test_NAME, optionally followed by fast: " + line)
		}
		all = append(all, fields[0])
		if len(fields) == 2 {
			fast = append(fast, fields[0])
		}
	}
	return all, fast, nil
}
