package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/cmd/apysup/internal/report"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/testenv"
)

func TestParseApproveMode(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want approveMode
		ok   bool
	}{
		{"prompt", approveMode{kind: "prompt"}, true},
		{"deny", approveMode{kind: "deny"}, true},
		{"auto", approveMode{kind: "auto"}, true},
		{"socket:/run/a.sock", approveMode{kind: "socket", socket: "/run/a.sock"}, true},
		{"socket:rel/a:b", approveMode{kind: "socket", socket: "rel/a:b"}, true},
		{"socket:", approveMode{}, false},
		{"socket", approveMode{}, false},
		{"", approveMode{}, false},
		{"Auto", approveMode{}, false},
		{"yes", approveMode{}, false},
	} {
		got, err := parseApproveMode(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("%q: %+v %v", tc.in, got, err)
		}
	}
}

func TestDefaultApproveMode(t *testing.T) {
	_, tty := openPTY(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	for _, tc := range []struct {
		name   string
		stdin  io.Reader
		stderr io.Writer
		want   string
	}{
		{"both terminals", tty, tty, approvePrompt},
		{"stdin a pipe", r, tty, approveDeny},
		{"stderr a pipe", tty, w, approveDeny},
		{"stderr a buffer", tty, &bytes.Buffer{}, approveDeny},
		{"regular file", mustOpen(t, "approve.go"), tty, approveDeny},
		{"nil", nil, nil, approveDeny},
	} {
		if got := defaultApproveMode(tc.stdin, tc.stderr); got.kind != tc.want {
			t.Errorf("%s: %s", tc.name, got.kind)
		}
	}
}

func mustOpen(t *testing.T, path string) *os.File {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func TestTerminalSafe(t *testing.T) {
	for in, want := range map[string]string{
		`{"text":"buy milk"}`:     `{"text":"buy milk"}`,
		"héllo ✓ 日本":              "héllo ✓ 日本",
		"\x1b[2J\x1b]0;pwned\x07": `\u001b[2J\u001b]0;pwned\u0007`,
		"a\tb\nc\rd":              `a\u0009b\u000ac\u000dd`,
		"del\x7f":                 `del\u007f`,
		"c1 \u009b31m":            `c1 \u009b31m`,
		"bidi \u202eevil":         `bidi \u202eevil`,
		"zero\u200bwidth":         `zero\u200bwidth`,
		"tag \U000E0041":          `tag \udb40\udc41`,
		"bad \xff\xfe utf8":       `bad \xff\xfe utf8`,
		"nbsp\u00a0":              `nbsp\u00a0`,
	} {
		if got := report.TerminalSafe(in); got != want {
			t.Errorf("%q: got %s want %s", in, got, want)
		}
	}
}

// openPTY opens a pseudo-terminal pair; both ends close when the test ends.
func openPTY(t *testing.T) (master, tty *os.File) {
	t.Helper()
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	testenv.Need(t, err == nil, "/dev/ptmx (pseudo-terminals)")
	var n int
	raw, err := m.SyscallConn()
	if err == nil {
		cerr := raw.Control(func(fd uintptr) {
			if err = unix.IoctlSetPointerInt(int(fd), unix.TIOCSPTLCK, 0); err == nil {
				n, err = unix.IoctlGetInt(int(fd), unix.TIOCGPTN)
			}
		})
		if err == nil {
			err = cerr
		}
	}
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	s, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		m.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(); m.Close() })
	return m, s
}

// transcript collects what a terminal (or a writer) shows and lets a test
// wait for text to appear, in order.
type transcript struct {
	mu     sync.Mutex
	cond   *sync.Cond
	buf    []byte
	cursor int
	closed bool
}

func newTranscript() *transcript {
	tr := &transcript{}
	tr.cond = sync.NewCond(&tr.mu)
	return tr
}

func (tr *transcript) Write(p []byte) (int, error) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.buf = append(tr.buf, p...)
	tr.cond.Broadcast()
	return len(p), nil
}

func (tr *transcript) close() {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.closed = true
	tr.cond.Broadcast()
}

func (tr *transcript) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return string(tr.buf)
}

// expect waits until want appears after the previous match and returns
// everything shown up to and including it. A guard (not an assertion on
// speed) turns a hang into a failure that shows the transcript.
func (tr *transcript) expect(t *testing.T, want string) string {
	t.Helper()
	guard := time.AfterFunc(2*time.Minute, tr.close)
	defer guard.Stop()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for {
		if i := bytes.Index(tr.buf[tr.cursor:], []byte(want)); i >= 0 {
			seen := string(tr.buf[tr.cursor : tr.cursor+i+len(want)])
			tr.cursor += i + len(want)
			return seen
		}
		if tr.closed {
			t.Fatalf("never shown: %q\ntranscript:\n%s", want, tr.buf)
		}
		tr.cond.Wait()
	}
}

// terminal is a pty whose output is collected: the approver talks to tty,
// the test types on and reads from the master side.
type terminal struct {
	master, tty *os.File
	shown       *transcript
}

func newTerminal(t *testing.T) *terminal {
	m, s := openPTY(t)
	term := &terminal{master: m, tty: s, shown: newTranscript()}
	done := make(chan struct{})
	go func() {
		defer close(done)
		io.Copy(term.shown, m)
		term.shown.close()
	}()
	t.Cleanup(func() { s.Close(); m.Close(); <-done })
	return term
}

func (term *terminal) typeIn(t *testing.T, keys string) {
	t.Helper()
	if _, err := term.master.WriteString(keys); err != nil {
		t.Fatal(err)
	}
}

// promptApprover runs the prompt approver on a fresh terminal until the
// test ends.
func promptApprover(t *testing.T, a *broker.Approvals) *terminal {
	term := newTerminal(t)
	stop, err := startApproverMode(context.Background(), approveMode{kind: approvePrompt}, a, term.tty, term.tty)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop) // runs before the terminal closes
	return term
}

// testPlanSHA256 stands for a Plan's digest in requests opened by hand.
var testPlanSHA256 = "sha256:" + strings.Repeat("5d", 32)

// waitingCall opens a request as the Broker does and waits for it in the
// background, as the guest's call does; the channel gets the final state.
func waitingCall(t *testing.T, a *broker.Approvals, callID, preview string, lease time.Duration) (broker.ApprovalRecord, <-chan broker.ApprovalState) {
	t.Helper()
	rec, err := a.Request(broker.ApprovalRequest{ApprovalBinding: broker.ApprovalBinding{RunID: "run_1", PlanSHA256: testPlanSHA256,
		ParentCallID: "main", CallID: callID, Capability: "notes.put", ArgumentsSHA256: canonjson.PlainDigest([]byte(preview))},
		Preview: preview, Lease: lease})
	if err != nil {
		t.Fatal(err)
	}
	state := make(chan broker.ApprovalState, 1)
	go func() {
		s, _ := a.Wait(context.Background(), rec.ID)
		state <- s
	}()
	return rec, state
}

func TestPromptAnswers(t *testing.T) {
	for _, tc := range []struct {
		name, keys string
		want       broker.ApprovalState
		shown      []string
	}{
		{"y", "y\n", broker.ApprovalApproved, []string{"approved"}},
		{"yes", " YES \n", broker.ApprovalApproved, []string{"approved"}},
		{"n", "n\n", broker.ApprovalRejected, []string{"rejected"}},
		{"no", "no\n", broker.ApprovalRejected, []string{"rejected"}},
		{"garbage then y", "maybe\n\n" + strings.Repeat("y", 300) + "\ny\n", broker.ApprovalApproved,
			[]string{"please answer y or n: ", "please answer y or n: ", "please answer y or n: ", "approved"}},
		{"ctrl-d", "\x04", broker.ApprovalRejected, []string{"rejected (end of input)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := broker.NewApprovals(broker.ApprovalOptions{})
			term := promptApprover(t, a)
			rec, state := waitingCall(t, a, "main:program:1", `{"text":"buy milk"}`, 30*time.Second)
			prompt := term.shown.expect(t, "approve this call? [y/n] ")
			for _, want := range []string{"approval needed", "capability  notes.put", "call id     main:program:1",
				`arguments   {"text":"buy milk"}`, "run         run_1", "plan        " + testPlanSHA256, "lease       30s, ", "s left",
				"request     " + rec.ID} {
				if !strings.Contains(prompt, want) {
					t.Errorf("prompt lacks %q:\n%s", want, prompt)
				}
			}
			term.typeIn(t, tc.keys)
			for _, want := range tc.shown {
				term.shown.expect(t, want)
			}
			if got := <-state; got != tc.want {
				t.Fatalf("state %s, want %s\n%s", got, tc.want, term.shown)
			}
		})
	}
}

func TestPromptHandlesRequestsInOrder(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	// Both wait before the approver starts: the first is asked first, and
	// its question says that another waits.
	_, first := waitingCall(t, a, "main:program:1", `{"n":1}`, time.Minute)
	_, second := waitingCall(t, a, "main:program:2", `{"n":2}`, time.Minute)
	term := promptApprover(t, a)
	if p := term.shown.expect(t, "[y/n] "); !strings.Contains(p, "approval needed (1 more waiting)") || !strings.Contains(p, "main:program:1") {
		t.Fatalf("first question:\n%s", p)
	}
	term.typeIn(t, "y\n")
	p := term.shown.expect(t, "[y/n] ")
	if !strings.Contains(p, "approved") || !strings.Contains(p, "main:program:2") || !strings.Contains(p, `{"n":2}`) {
		t.Fatalf("second question:\n%s", p)
	}
	term.typeIn(t, "n\n")
	if got := <-first; got != broker.ApprovalApproved {
		t.Fatalf("first %s", got)
	}
	if got := <-second; got != broker.ApprovalRejected {
		t.Fatalf("second %s", got)
	}
}

func TestPromptLeaseExpires(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	term := promptApprover(t, a)
	_, state := waitingCall(t, a, "main:program:1", `{}`, broker.MinLease)
	term.shown.expect(t, "[y/n] ")
	term.shown.expect(t, "the lease ran out: the request expired and the call is refused")
	if got := <-state; got != broker.ApprovalExpired {
		t.Fatalf("%s", got)
	}
	// The prompt moved on: the next request is asked about.
	if p, got := askAndAnswer(t, term, a, `{}`, "y\n"); got != broker.ApprovalApproved || !strings.Contains(p, "main:program:2") {
		t.Fatalf("%s\n%s", got, p)
	}
}

// askAndAnswer opens the request main:program:2, answers its question with
// keys, and returns the question and the request's final state.
func askAndAnswer(t *testing.T, term *terminal, a *broker.Approvals, preview, keys string) (string, broker.ApprovalState) {
	t.Helper()
	_, state := waitingCall(t, a, "main:program:2", preview, time.Minute)
	p := term.shown.expect(t, "[y/n] ")
	term.typeIn(t, keys)
	return p, <-state
}

func TestPromptIgnoresTypedAhead(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	term := promptApprover(t, a)
	term.typeIn(t, "y\n")
	term.shown.expect(t, "no approval request is waiting; input ignored")
	if _, got := askAndAnswer(t, term, a, `{}`, "n\n"); got != broker.ApprovalRejected {
		t.Fatalf("a key typed before the question answered it: %s", got)
	}
}

func TestPromptEscapesGuestText(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	term := promptApprover(t, a)
	evil := "{\"text\":\"\x1b]0;pwned\x07\x1b[2J\u009b2J\u202eoof\x7f\"}"
	p, _ := askAndAnswer(t, term, a, evil, "n\n")
	if strings.ContainsAny(p, "\x1b\x07\x7f\u009b\u202e") {
		t.Fatalf("raw control characters reached the terminal: %q", p)
	}
	if !strings.Contains(p, `{"text":"\u001b]0;pwned\u0007\u001b[2J\u009b2J\u202eoof\u007f"}`) {
		t.Fatalf("not shown escaped: %q", p)
	}
}

func TestPromptEndOfInputRejectsTheRest(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	shown := newTranscript()
	stop, err := startApproverMode(context.Background(), approveMode{kind: approvePrompt}, a, r, shown)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	_, first := waitingCall(t, a, "main:program:1", `{}`, time.Minute)
	shown.expect(t, "[y/n] ")
	w.Close() // the end of a pipe is the end of the input, for good
	if got := <-first; got != broker.ApprovalRejected {
		t.Fatalf("%s", got)
	}
	_, second := waitingCall(t, a, "main:program:2", `{}`, time.Minute)
	shown.expect(t, "rejected: the input has ended")
	if got := <-second; got != broker.ApprovalRejected {
		t.Fatalf("%s", got)
	}
}

const twoNotesScript = `
import agent_runtime, notes
print("before")
for text in ("first", "second"):
    try:
        print(notes.put(text=text))
    except agent_runtime.CapabilityError as e:
        print("refused:", e.error_code)
print("after")
`

// runOutcome is what an in-process run printed on stdout and its exit status.
type runOutcome struct {
	out  string
	code int
}

// runInBackground runs the CLI in-process with the given stdin and stderr
// (a terminal, as a shell would, or a transcript). A test that ends before
// the run does cancels it and waits, so nothing outlives the test.
func runInBackground(t *testing.T, stdin io.Reader, stderr io.Writer, args ...string) (<-chan runOutcome, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	done, finished := make(chan runOutcome, 1), make(chan struct{})
	go func() {
		defer close(finished)
		var out bytes.Buffer
		app := newApp(&out, stderr)
		app.Reader = stdin
		code := 0
		if err := app.RunContext(ctx, append([]string{"apysup"}, args...)); err != nil {
			code = exitCode(err)
		}
		done <- runOutcome{out.String(), code}
	}()
	t.Cleanup(func() { cancel(); <-finished })
	return done, cancel
}

func TestRunPromptOnTerminal(t *testing.T) {
	needNative(t)
	m := writeManifest(t, approvalManifest)
	s := script(t, twoNotesScript)
	term := newTerminal(t)
	// No --approve: stdin and stderr are a terminal, so the default asks.
	done, _ := runInBackground(t, term.tty, term.tty, "run", "--json", "--plan", m, s)
	first := term.shown.expect(t, "approve this call? [y/n] ")
	for _, want := range []string{"capability  notes.put", "call id     main:program:1", `arguments   {"text":"first"}`, "lease       30s, "} {
		if !strings.Contains(first, want) {
			t.Errorf("prompt lacks %q:\n%s", want, first)
		}
	}
	term.typeIn(t, "y\n")
	term.shown.expect(t, "approved")
	p := term.shown.expect(t, "approve this call? [y/n] ")
	if !strings.Contains(p, `{"text":"second"}`) || !strings.Contains(p, "main:program:2") {
		t.Fatalf("second prompt:\n%s", p)
	}
	term.typeIn(t, "no\n")
	term.shown.expect(t, "rejected")
	o := <-done
	var res supervisor.Result
	if err := json.Unmarshal([]byte(o.out), &res); err != nil || o.code != 0 {
		t.Fatalf("exit %d %v: %s\nterminal:\n%s", o.code, err, o.out, term.shown)
	}
	// The guest went on in the same run after each decision.
	want := "before\n{'echo': {'text': 'first'}}\nrefused: approval_rejected\nafter\n"
	if res.Stdout != want {
		t.Fatalf("stdout %q, want %q", res.Stdout, want)
	}
	if len(res.Receipts) != 2 || res.Receipts[0].Outcome != "ok" || res.Receipts[1].Outcome != "denied" ||
		res.Receipts[0].ApprovalRequestID == "" || res.Receipts[1].ApprovalRequestID == "" {
		t.Fatalf("receipts %+v", res.Receipts)
	}
	// The person was shown the Plan the run is bound to.
	if !strings.Contains(first, "plan        "+res.PlanSHA256) || !strings.Contains(first, "run         "+res.RunID) {
		t.Fatalf("prompt without the run's Plan %s:\n%s", res.PlanSHA256, first)
	}
}

// TestRunEndsWhileAsking: a run that ends (here cancelled, as Ctrl-C does)
// while a question is shown cancels the request, and the prompt says so.
func TestRunEndsWhileAsking(t *testing.T) {
	needNative(t)
	term := newTerminal(t)
	done, cancel := runInBackground(t, term.tty, term.tty, "run", "--json", "--approve", "prompt",
		"--plan", writeManifest(t, approvalManifest), script(t, twoNotesScript))
	term.shown.expect(t, "approve this call? [y/n] ")
	cancel()
	term.shown.expect(t, "the call was cancelled (the run is ending)")
	o := <-done
	var res supervisor.Result
	if err := json.Unmarshal([]byte(o.out), &res); err != nil {
		t.Fatalf("exit %d %v: %s\n%s", o.code, err, o.out, term.shown)
	}
	if o.code != ExitKilled || res.Status != "killed" || len(res.Receipts) != 1 || res.Receipts[0].Outcome != "denied" ||
		res.Receipts[0].ErrorCode != "approval_cancelled" {
		t.Fatalf("exit %d: %+v", o.code, res)
	}
}

func TestRunApprovalsOverSocket(t *testing.T) {
	needNative(t)
	m := writeManifest(t, approvalManifest)
	s := script(t, twoNotesScript)
	sock := filepath.Join(t.TempDir(), "admin.sock")
	shown := newTranscript()
	done, _ := runInBackground(t, nil, shown, "run", "--json", "--approve", "socket:"+sock, "--plan", m, s)
	shown.expect(t, "apysup: approvals wait on "+sock)
	if fi, err := os.Lstat(sock); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket %v %v", fi, err)
	}

	list := func() rpc.ApprovalList {
		out, errOut, code := run(t, "approvals", "list", "--socket", sock, "--wait", "1m", "--json")
		var l rpc.ApprovalList
		if err := json.Unmarshal([]byte(out), &l); err != nil || code != 0 || len(l.Pending) != 1 || schemaOf(t, out) != "apysup.approvals_list.v1" {
			t.Fatalf("list: exit %d %v: %s %s", code, err, out, errOut)
		}
		return l
	}
	first := list().Pending[0]
	if first.CallID != "main:program:1" || first.Preview != `{"text":"first"}` || first.Capability != "notes.put" {
		t.Fatalf("%+v", first)
	}
	shown.expect(t, "approval "+first.ID+" waiting: notes.put main:program:1")
	out, _, code := run(t, "approvals", "list", "--socket", sock)
	if code != 0 || !strings.Contains(out, "ID") || !strings.Contains(out, "PREVIEW") || !strings.Contains(out, first.ID+"  notes.put") ||
		!strings.Contains(out, "main:program:1  "+report.ShortDigest(first.PlanSHA256)) || !strings.Contains(out, `{"text":"first"}`) {
		t.Fatalf("human list: exit %d\n%s", code, out)
	}

	if out, errOut, code := run(t, "approvals", "approve", "--socket", sock, first.ID); code != 0 ||
		!strings.HasPrefix(out, "approved "+first.ID+" (notes.put, call main:program:1, plan "+report.ShortDigest(first.PlanSHA256)+")") {
		t.Fatalf("approve: exit %d %s %s", code, out, errOut)
	}
	shown.expect(t, "apysup: approval "+first.ID+" approved")
	if _, errOut, code := run(t, "approvals", "approve", "--socket", sock, first.ID); code != 1 || !strings.Contains(errOut, "approval_already_decided (approved)") {
		t.Fatalf("second approve: exit %d %s", code, errOut)
	}
	if out, _, code := run(t, "approvals", "reject", "--socket", sock, "--json", first.ID); code != 1 || !strings.Contains(out, `"error_code": "approval_already_decided"`) {
		t.Fatalf("reject after approve: exit %d %s", code, out)
	}

	second := list().Pending[0]
	if second.CallID != "main:program:2" {
		t.Fatalf("%+v", second)
	}
	out, _, code = run(t, "approvals", "list", "--socket", sock, "--records")
	if code != 0 || !strings.Contains(out, "STATE") || !strings.Contains(out, "DISPATCH") || !strings.Contains(out, "waiting") ||
		!regexp.MustCompile(first.ID+`.* approved +completed +\S+ +ok`).MatchString(out) || strings.Contains(out, "first") {
		t.Fatalf("records: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"approve", "--socket", sock, "apr_000000000000000000000000"}, 1, "approval_not_found"},
		{[]string{"reject", "--socket", sock, "../../etc"}, 1, "malformed_request"},
		{[]string{"approve", "--socket", sock}, 2, "expected 1 argument"},
		{[]string{"approve", second.ID}, 2, "--socket PATH is required"},
		{[]string{"list", "--socket", sock, "extra"}, 2, `unexpected argument "extra"`},
		{[]string{"list", "--socket", sock, "--wait", "2m"}, 2, "--wait"},
		{[]string{"list", "--socket", sock, "--bogus"}, 2, "bogus"},
		{[]string{"list", "--socket", filepath.Join(t.TempDir(), "none.sock")}, 1, "socket_unreachable"},
	} {
		if _, errOut, code := run(t, append([]string{"approvals"}, tc.args...)...); code != tc.code || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d %s", tc.args, code, errOut)
		}
	}
	if _, errOut, code := run(t, "approvals", "reject", "--socket", sock, second.ID); code != 0 {
		t.Fatalf("reject: exit %d %s", code, errOut)
	}
	shown.expect(t, "apysup: approval "+second.ID+" rejected")

	var res supervisor.Result
	if o := <-done; json.Unmarshal([]byte(o.out), &res) != nil || o.code != 0 {
		t.Fatalf("run: exit %d %s\n%s", o.code, o.out, shown)
	}
	if res.Stdout != "before\n{'echo': {'text': 'first'}}\nrefused: approval_rejected\nafter\n" ||
		res.Receipts[0].ApprovalRequestID != first.ID || res.Receipts[1].ApprovalRequestID != second.ID {
		t.Fatalf("%+v", res)
	}
	// Each request was bound to the run and its Plan.
	for _, p := range []broker.PendingRequest{first, second} {
		if p.RunID != res.RunID || p.PlanSHA256 != res.PlanSHA256 || p.ParentCallID != "main" {
			t.Fatalf("request %+v, run %s plan %s", p.ApprovalRecord, res.RunID, res.PlanSHA256)
		}
	}
	if _, err := os.Lstat(sock); err == nil {
		t.Fatal("the admin socket outlived the run")
	}
}

func TestRunApproveSocketRefusesExistingPath(t *testing.T) {
	existing := filepath.Join(t.TempDir(), "taken")
	if err := os.WriteFile(existing, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := script(t, "print('never')\n")
	for mode, want := range map[string]string{
		"socket:" + existing: "file already exists",
		"socket:":            "--approve must be prompt, deny, auto or socket:PATH",
		"maybe":              "--approve must be prompt, deny, auto or socket:PATH",
	} {
		if _, errOut, code := run(t, "run", "--approve", mode, s); code != 2 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d %s", mode, code, errOut)
		}
	}
	if got := readFile(t, existing); got != "mine" {
		t.Fatalf("the existing file was changed: %q", got)
	}
}

// TestBinaryPromptOnControllingTerminal runs the real binary as a shell
// would: a session whose controlling terminal is a pty, stdin and stderr on
// it, stdout to a pipe. The default asks; the guest, confined, cannot
// reach the terminal the person answers on.
func TestBinaryPromptOnControllingTerminal(t *testing.T) {
	needNative(t)
	goTool, err := exec.LookPath("go")
	testenv.Need(t, err == nil, "the go tool, to build the binary")
	bin := filepath.Join(t.TempDir(), "apysup")
	build := exec.Command(goTool, "build", "-tags", "seccomp", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	m := writeManifest(t, approvalManifest)
	s := script(t, `
import agent_runtime, notes
try:
    open("/dev/tty", "r+b", buffering=0)
    print("tty: open")
except OSError as e:
    print("tty: refused")
print(notes.put(text="first"))
`)
	term := newTerminal(t)
	var stdout bytes.Buffer
	cmd := exec.Command(bin, "run", "--json", "--plan", m, s)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = term.tty, &stdout, term.tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waited, exited := make(chan error, 1), make(chan struct{})
	go func() { waited <- cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited }) // a no-op once it exited
	p := term.shown.expect(t, "approve this call? [y/n] ")
	if !strings.Contains(p, `arguments   {"text":"first"}`) {
		t.Fatalf("%s", p)
	}
	term.typeIn(t, "y\n")
	term.shown.expect(t, "approved")
	if err := <-waited; err != nil {
		t.Fatalf("%v\nterminal:\n%s", err, term.shown)
	}
	var res supervisor.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v: %s", err, stdout.String())
	}
	if res.Stdout != "tty: refused\n{'echo': {'text': 'first'}}\n" || res.Receipts[0].Outcome != "ok" {
		t.Fatalf("%+v", res)
	}
}

// FuzzTerminalSafe: whatever a guest puts in its arguments, what reaches
// the terminal is valid UTF-8 made of printable runes only.
func FuzzTerminalSafe(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[2J", "\u009b", "\u202e", "\xff", "\U000E0041", "\\u001b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := report.TerminalSafe(s)
		if !utf8.ValidString(out) {
			t.Fatalf("%q -> invalid UTF-8 %q", s, out)
		}
		for _, r := range out {
			if !unicode.IsPrint(r) {
				t.Fatalf("%q -> %q holds %U", s, out, r)
			}
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) && out != s {
			t.Fatalf("printable %q changed to %q", s, out)
		}
	})
}

func TestPrintPendingTable(t *testing.T) {
	now := time.Now()
	var out bytes.Buffer
	printPending(&out, &rpc.ApprovalList{Now: now, Pending: []broker.PendingRequest{{
		ApprovalRecord: broker.ApprovalRecord{ID: "apr_1", ApprovalBinding: broker.ApprovalBinding{Capability: "notes.put", CallID: "main:program:1",
			PlanSHA256: testPlanSHA256}, CreatedAt: now.Add(-3 * time.Second), ExpiresAt: now.Add(27 * time.Second)},
		Preview: `{"text":"` + strings.Repeat("x", 100) + "\x1b[2J" + `"}`,
	}}})
	lines := strings.Split(strings.TrimRight(out.String(), "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "ID     CAPABILITY  CALL ID         PLAN                  WAITING  LEFT  PREVIEW") ||
		!strings.HasPrefix(lines[1], "apr_1  notes.put   main:program:1  sha256:5d5d5d5d5d5d…  3s       27s   {\"text\":\"xxx") ||
		!strings.HasSuffix(lines[1], "x…") || strings.Contains(out.String(), "\x1b") {
		t.Fatalf("\n%s", out.String())
	}
	out.Reset()
	printPending(&out, &rpc.ApprovalList{Now: now})
	if out.String() != "no approval requests waiting\n" {
		t.Fatalf("%q", out.String())
	}
}

func TestPrintRecordsTable(t *testing.T) {
	now := time.Now()
	rec := func(id string, state broker.ApprovalState, dispatch broker.DispatchState, outcome string) broker.ApprovalRecord {
		return broker.ApprovalRecord{ID: id, ApprovalBinding: broker.ApprovalBinding{Capability: "notes.put", CallID: "main:program:1",
			PlanSHA256: testPlanSHA256}, State: state, Dispatch: dispatch, Outcome: outcome, CreatedAt: now.Add(-time.Minute)}
	}
	var out bytes.Buffer
	printRecords(&out, &rpc.ApprovalRecords{Now: now, Records: []broker.ApprovalRecord{
		rec("apr_1", broker.ApprovalApproved, broker.DispatchCompleted, "ok"),
		rec("apr_2", broker.ApprovalApproved, broker.DispatchCancelled, ""),
		rec("apr_3", broker.ApprovalRejected, broker.DispatchNone, ""),
	}})
	want := "" +
		"ID     CAPABILITY  CALL ID         PLAN                  STATE     DISPATCH   AGE   OUTCOME\n" +
		"apr_1  notes.put   main:program:1  sha256:5d5d5d5d5d5d…  approved  completed  1m0s  ok\n" +
		"apr_2  notes.put   main:program:1  sha256:5d5d5d5d5d5d…  approved  cancelled  1m0s  -\n" +
		"apr_3  notes.put   main:program:1  sha256:5d5d5d5d5d5d…  rejected  none       1m0s  -\n"
	if out.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", out.String(), want)
	}
}

// TestAnnounce: the socket approver's terminal hears of each request, its
// decision, and an approved call that was not dispatched after all.
func TestAnnounce(t *testing.T) {
	a := broker.NewApprovals(broker.ApprovalOptions{})
	shown := newTranscript()
	events, unsubscribe := a.Subscribe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); announce(ctx, shown, "/run/a.sock", events) }()
	defer func() { cancel(); <-done; unsubscribe() }()
	rec, _ := waitingCall(t, a, "main:program:1", "{}", time.Minute)
	shown.expect(t, "apysup: approval "+rec.ID+" waiting: notes.put main:program:1, plan sha256:5d5d5d5d5d5d…, lease 1m0s")
	if err := a.Approve(rec.ID); err != nil {
		t.Fatal(err)
	}
	shown.expect(t, "apysup: approval "+rec.ID+" approved\n")
	gone, stop := context.WithCancel(context.Background())
	stop()
	if err := a.BeginDispatch(gone, rec.ID, rec.ApprovalBinding); !errors.Is(err, broker.ErrDispatchCancelled) {
		t.Fatal(err)
	}
	shown.expect(t, "apysup: approval "+rec.ID+" approved, but not dispatched: cancelled before dispatch\n")
}
