package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/apysup/apysup/broker"
)

// execHandlerOf builds an exec handler whose command is /bin/sh -c script
// with extra arguments; extra config fields are JSON members (",k":v).
func execHandlerOf(t *testing.T, opts Options, script string, args []string, extra string) broker.Handler {
	t.Helper()
	argv, _ := json.Marshal(append([]string{"/bin/sh", "-c", script, "sh"}, args...))
	return handlerOf(t, opts, capability{name: "tool.run", kind: "exec", config: `{"argv":` + string(argv) + extra + `}`}).(broker.Handler)
}

func TestExec(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("APYSUP_TEST_HOST_SECRET", "host-only")
	tests := []struct {
		name   string
		script string
		extra  string
		args   string
		want   string // result, or
		code   string // error code
	}{
		{"echo arguments", `exec cat`, ``, `{"a":[1,"x"]}`, `{"a":[1,"x"]}`, ""},
		{"trailing newline", `printf '{"ok":true}\n'`, ``, `{}`, `{"ok":true}`, ""},
		{"scrubbed environment", `printf '{"g":"%s","path":"%s","home":"%s","secret":"%s"}' "$GREETING" "$PATH" "${HOME-unset}" "${APYSUP_TEST_HOST_SECRET-unset}"`,
			`,"env":{"GREETING":"hi"}`, `{}`, `{"g":"hi","path":"/usr/bin:/bin","home":"unset","secret":"unset"}`, ""},
		{"config PATH wins", `printf '{"path":"%s"}' "$PATH"`, `,"env":{"PATH":"/bin"}`, `{}`, `{"path":"/bin"}`, ""},
		{"default directory", `printf '{"pwd":"%s"}' "$(pwd)"`, ``, `{}`, `{"pwd":"/"}`, ""},
		{"configured directory", `printf '{"pwd":"%s"}' "$(pwd)"`, `,"dir":"` + dir + `"`, `{}`, `{"pwd":"` + dir + `"}`, ""},
		{"only three descriptors", `printf "["; sep=""; for f in /proc/self/fd/*; do printf '%s"%s"' "$sep" "${f##*/}"; sep=","; done; printf "]"`,
			``, `{}`, `["0","1","2","3"]`, ""}, // 3 is the shell's own directory stream for the glob
		{"output exactly at the bound", `printf '"aaaa"'`, `,"max_output_bytes":6`, `{}`, `"aaaa"`, ""},

		{"non-zero exit", `echo '{}'; exit 3`, ``, `{}`, ``, CodeExecFailed},
		{"killed by a signal", `kill -9 $$`, ``, `{}`, ``, CodeExecFailed},
		{"not JSON", `echo hello`, ``, `{}`, ``, CodeExecBadOutput},
		{"two values", `echo '{} {}'`, ``, `{}`, ``, CodeExecBadOutput},
		{"no output", `true`, ``, `{}`, ``, CodeExecBadOutput},
		{"duplicate keys", `echo '{"a":1,"a":2}'`, ``, `{}`, ``, CodeExecBadOutput},
		{"invalid UTF-8", `printf '"\377"'`, ``, `{}`, ``, CodeExecBadOutput},
		{"lone surrogate", `printf '"\\ud800"'`, ``, `{}`, ``, CodeExecBadOutput},
		{"output one byte over", `printf '"aaaa"'`, `,"max_output_bytes":5`, `{}`, ``, CodeExecOutputTooLarge},
		{"endless output", `exec yes`, `,"max_output_bytes":1024`, `{}`, ``, CodeExecOutputTooLarge},
		{"timeout", `exec sleep 1000`, `,"timeout":"50ms"`, `{}`, ``, CodeExecTimeout},
		{"timeout with output pending", `echo '{}'; exec sleep 1000`, `,"timeout":"50ms"`, `{}`, ``, CodeExecTimeout},
		{"ignores SIGTERM", `trap "" TERM; sleep 1000`, `,"timeout":"50ms"`, `{}`, ``, CodeExecTimeout},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := execHandlerOf(t, Options{}, tc.script, nil, tc.extra)
			out, err := h.Call(context.Background(), json.RawMessage(tc.args))
			if tc.code != "" {
				if CodeOf(err) != tc.code || out != nil {
					t.Fatalf("got %s %v, want %s", out, err, tc.code)
				}
				return
			}
			if err != nil || string(out) != tc.want {
				t.Fatalf("got %s %v, want %s", out, err, tc.want)
			}
		})
	}
}

// processDead reports whether pid has exited (gone, or a zombie nobody has
// reaped yet).
func processDead(t *testing.T, pid int) bool {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && i+2 < len(data) && (data[i+2] == 'Z' || data[i+2] == 'X')
}

func readPid(t *testing.T, file string) int {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// TestExecLeavesNoProcess: whatever way a call ends, nothing the command
// started is still running when Call returns.
func TestExecLeavesNoProcess(t *testing.T) {
	tests := []struct {
		name, script, extra, code string
	}{
		{"success with a background child", `sleep 1000 & echo $! > "$1"; echo '{}'`, ``, ""},
		{"failure with a background child", `sleep 1000 & echo $! > "$1"; exit 1`, ``, CodeExecFailed},
		{"timeout with a background child", `sleep 1000 & echo $! > "$1"; wait`, `,"timeout":"100ms"`, CodeExecTimeout},
		{"overflow with a background child", `sleep 1000 & echo $! > "$1"; exec yes`, `,"max_output_bytes":64`, CodeExecOutputTooLarge},
		{"child closed its stdout", `sleep 1000 >/dev/null 2>&1 & echo $! > "$1"; echo '{}'`, ``, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pidFile := filepath.Join(t.TempDir(), "pid")
			h := execHandlerOf(t, Options{}, tc.script, []string{pidFile}, tc.extra)
			_, err := h.Call(context.Background(), json.RawMessage(`{}`))
			if CodeOf(err) != tc.code {
				t.Fatalf("got %v, want %q", err, tc.code)
			}
			pid := readPid(t, pidFile)
			if !processDead(t, pid) {
				syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d still running after Call returned", pid)
			}
		})
	}
}

func TestExecCancel(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "started")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(dir, "pid")
	h := execHandlerOf(t, Options{}, `sleep 1000 & echo $! > "$1"; echo go > "$2"; wait`, []string{pidFile, fifo}, ``)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := h.Call(ctx, json.RawMessage(`{}`))
		done <- err
	}()
	f, err := os.Open(fifo) // blocks until the command opens it: it has started
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Read(make([]byte, 3)); err != nil {
		t.Fatal(err)
	}
	f.Close()
	cancel()
	err = <-done
	if CodeOf(err) != CodeCancelled || !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v", err)
	}
	if pid := readPid(t, pidFile); !processDead(t, pid) {
		t.Fatalf("process %d survived cancellation", pid)
	}
}

func TestExecStdin(t *testing.T) {
	big := `{"s":"` + strings.Repeat("x", 300<<10) + `"}`
	t.Run("large arguments echoed", func(t *testing.T) {
		h := execHandlerOf(t, Options{}, `exec cat`, nil, ``)
		out, err := h.Call(context.Background(), json.RawMessage(big))
		if err != nil || string(out) != big {
			t.Fatalf("got %d bytes, %v", len(out), err)
		}
	})
	t.Run("large arguments never read", func(t *testing.T) {
		h := execHandlerOf(t, Options{}, `echo '{"ignored":true}'`, nil, ``)
		out, err := h.Call(context.Background(), json.RawMessage(big))
		if err != nil || string(out) != `{"ignored":true}` {
			t.Fatalf("got %s, %v", out, err)
		}
	})
}

func TestExecStderr(t *testing.T) {
	const secret = "STDERR-SECRET-93"
	script := `echo ` + secret + ` >&2; head -c 100000 /dev/zero | tr '\0' e >&2; exit 2`
	var sink bytes.Buffer
	h := execHandlerOf(t, Options{ExecStderr: &sink}, script, nil, ``)
	_, err := h.Call(context.Background(), json.RawMessage(`{}`))
	if CodeOf(err) != CodeExecFailed {
		t.Fatalf("got %v", err)
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), "/bin/sh") {
		t.Fatalf("error leaks stderr or argv: %v", err)
	}
	if sink.Len() != MaxExecStderrBytes || !strings.HasPrefix(sink.String(), secret) {
		t.Fatalf("sink got %d bytes", sink.Len())
	}
	// Without a sink, stderr is drained and dropped: a command writing a lot
	// to it never blocks.
	h = execHandlerOf(t, Options{}, `head -c 1000000 /dev/zero >&2; echo '{}'`, nil, ``)
	if out, err := h.Call(context.Background(), json.RawMessage(`{}`)); err != nil || string(out) != `{}` {
		t.Fatalf("got %s %v", out, err)
	}
}

func TestExecConcurrent(t *testing.T) {
	h := execHandlerOf(t, Options{}, `exec cat`, nil, ``)
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := fmt.Sprintf(`{"i":%d}`, i)
			if out, err := h.Call(context.Background(), json.RawMessage(args)); err != nil || string(out) != args {
				t.Errorf("call %d: %s %v", i, out, err)
			}
		}()
	}
	wg.Wait()
}

// TestExecThroughBroker: the broker answers every handler error with
// handler_error and a fixed message.
func TestExecThroughBroker(t *testing.T) {
	b := runBroker(t, Options{},
		capability{name: "tool.ok", kind: "exec", id: "ok", config: `{"argv":["/bin/cat"]}`},
		capability{name: "tool.bad", kind: "exec", id: "bad", config: `{"argv":["/bin/sh","-c","echo secret-out; echo secret-err >&2; exit 1"]}`})
	if r := brokerCall(t, b, 1, "tool.ok", `{"q":"x"}`); r.Status != "ok" || string(r.Result) != `{"q":"x"}` {
		t.Fatalf("ok: %+v", r)
	}
	r := brokerCall(t, b, 2, "tool.bad", `{}`)
	if r.Status != "error" || r.ErrorCode != "handler_error" || r.Result != nil {
		t.Fatalf("bad: %+v", r)
	}
}
