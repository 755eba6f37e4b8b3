package wazero

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/apysup/apysup/broker"
)

func TestParseReport(t *testing.T) {
	const limit = 64 << 20
	for _, tc := range []struct {
		name, data string
		want       childReport
		bad        string // in the error, "" if accepted
	}{
		{"returned", `{"ending":"returned","peak_memory":1048576,"cpu_time_ns":5}`, childReport{Ending: endReturned, PeakMemory: 1 << 20, CPUTimeNs: 5}, ""},
		{"exited", `{"ending":"exited","exit_code":4294967295,"memory_refused":true}`, childReport{Ending: endExited, ExitCode: 1<<32 - 1, MemoryRefused: true}, ""},
		{"trapped", `{"ending":"trapped"}`, childReport{Ending: endTrapped}, ""},
		{"signaled", `{"ending":"signaled","signal":15}`, childReport{Ending: endSignaled, Signal: 15}, ""},
		{"signaled without a signal", `{"ending":"signaled"}`, childReport{}, "a signal without"},
		{"a signal of an exit", `{"ending":"exited","exit_code":143,"signal":15}`, childReport{}, "a signal without"},
		{"signal out of range", `{"ending":"signaled","signal":65}`, childReport{}, "out of range"},
		{"negative signal", `{"ending":"signaled","signal":-9}`, childReport{}, "out of range"},
		{"exit code of a signal", `{"ending":"signaled","signal":6,"exit_code":134}`, childReport{}, "exit code without an exit"},
		{"setup", `{"setup":"no build"}`, childReport{Setup: "no build"}, ""},
		{"empty", ``, childReport{}, "none"},
		{"lost is no ending", `{"ending":"lost"}`, childReport{}, "unknown ending"},
		{"no ending", `{}`, childReport{}, "unknown ending"},
		{"setup with an ending", `{"setup":"x","ending":"returned"}`, childReport{}, "setup failure with an ending"},
		{"exit code of a return", `{"ending":"returned","exit_code":3}`, childReport{}, "exit code without an exit"},
		{"negative cpu", `{"ending":"returned","cpu_time_ns":-1}`, childReport{}, "negative CPU time"},
		{"peak over the limit", `{"ending":"returned","peak_memory":67108865}`, childReport{}, "over the limit"},
		{"unknown field", `{"ending":"returned","status":"timeout"}`, childReport{}, "not a report"},
		{"two objects", `{"ending":"returned"}{"ending":"returned"}`, childReport{}, "trailing data"},
		{"not JSON", "S{", childReport{}, "not a report"},
		{"too long", `{"setup":"` + strings.Repeat("x", maxReportBytes) + `"}`, childReport{}, "longer than"},
		{"setup too long", `{"setup":"` + strings.Repeat("x", maxSetupBytes+1) + `"}`, childReport{}, "setup failure longer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseReport([]byte(tc.data), limit)
			var re *ReportError
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.bad != "" && (!errors.As(err, &re) || !strings.Contains(err.Error(), tc.bad) || re.ErrorCode() != ErrorCodeChildDied):
				t.Fatalf("err = %v, want a ReportError with %q", err, tc.bad)
			case got != tc.want:
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

// A report is the child's word, and the child runs the guest: whatever it
// writes, parseReport answers a consistent report or a *ReportError.
func FuzzParseReport(f *testing.F) {
	for _, s := range []string{`{"ending":"returned","peak_memory":1048576,"cpu_time_ns":5}`,
		`{"ending":"exited","exit_code":137,"memory_refused":true}`, `{"setup":"x"}`, `{"ending":"trapped"}`,
		`{"ending":"lost"}`, `{"setup":"x","exit_code":1}`, "", "null", `{"ending":"returned"} `,
		`{"ending":"signaled","signal":9}`, `{"ending":"exited","signal":9}`} {
		f.Add([]byte(s), uint64(64<<20))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit uint64) {
		r, err := parseReport(data, limit)
		if err != nil {
			var re *ReportError
			if !errors.As(err, &re) || r != (childReport{}) {
				t.Fatalf("%v with %+v", err, r)
			}
			return
		}
		switch {
		case r.Setup != "":
			if r != (childReport{Setup: r.Setup}) || len(r.Setup) > maxSetupBytes {
				t.Fatalf("setup report %+v", r)
			}
		case r.Ending != endReturned && r.Ending != endExited && r.Ending != endTrapped && r.Ending != endSignaled,
			r.Ending != endExited && r.ExitCode != 0, r.CPUTimeNs < 0, r.PeakMemory > limit,
			(r.Ending == endSignaled) != (r.Signal >= 1 && r.Signal <= maxSignal), r.Ending != endSignaled && r.Signal != 0:
			t.Fatalf("accepted %+v", r)
		}
	})
}

func TestCallWire(t *testing.T) {
	var buf bytes.Buffer
	frame := []byte(`{"call_id":"capability-1"}`)
	for _, tc := range []struct {
		frame []byte
		fault string
	}{{frame, ""}, {nil, broker.CodeFrameTooLarge}, {nil, broker.CodeFrameEmpty}, {nil, broker.CodeFrameMalformed}, {nil, ""}, {nil, faultGiveUp}} {
		if err := writeCall(&buf, tc.frame, tc.fault); err != nil {
			t.Fatal(err)
		}
		got, fault, err := readCall(&buf)
		if err != nil || !bytes.Equal(got, tc.frame) || fault != tc.fault {
			t.Fatalf("%q %q: read %q %q %v", tc.frame, tc.fault, got, fault, err)
		}
	}
	if err := writeCall(&buf, nil, "frame_odd"); err == nil {
		t.Fatal("wrote an unknown fault")
	}
	if _, _, err := readCall(&buf); err != io.EOF {
		t.Fatalf("end of calls: %v", err)
	}
	for _, envelope := range [][]byte{[]byte(`{"status":"completed"}`), nil} {
		if err := writeAnswer(&buf, envelope); err != nil {
			t.Fatal(err)
		}
		if got, err := readAnswer(&buf); err != nil || !bytes.Equal(got, envelope) {
			t.Fatalf("answer %q: %q %v", envelope, got, err)
		}
	}
}

// Both ends read the socket through a callBufferBytes buffer: calls and
// answers smaller than it, as large and larger, back to back, come out
// whole and in order.
func TestCallWireThroughBuffer(t *testing.T) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	child, parent := os.NewFile(uintptr(fds[0]), "child"), os.NewFile(uintptr(fds[1]), "parent")
	defer child.Close()
	defer parent.Close()
	var messages [][]byte
	for _, n := range []int{1, 100, callBufferBytes - 5, callBufferBytes - 4, callBufferBytes, callBufferBytes + 1, 3 * callBufferBytes, MaxMessageBytes} {
		messages = append(messages, bytes.Repeat([]byte{byte('a' + len(messages))}, n))
	}
	go func() {
		for _, m := range messages {
			_ = writeCall(child, m, "")
			_ = writeAnswer(child, m)
		}
		_ = child.Close()
	}()
	r := bufio.NewReaderSize(parent, callBufferBytes)
	for _, m := range messages {
		frame, fault, err := readCall(r)
		if err != nil || fault != "" || !bytes.Equal(frame, m) {
			t.Fatalf("call of %d bytes: %d bytes, %q, %v", len(m), len(frame), fault, err)
		}
		envelope, err := readAnswer(r)
		if err != nil || !bytes.Equal(envelope, m) {
			t.Fatalf("answer of %d bytes: %d bytes, %v", len(m), len(envelope), err)
		}
	}
	if _, _, err := readCall(r); err != io.EOF {
		t.Fatalf("end of calls: %v", err)
	}
}

// Calls come from the child: whatever it sends, readCall answers a call
// within the bounds, io.EOF at a clean end, or a *ReportError.
func FuzzReadCall(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x00\x02{}"))
	f.Add([]byte("\x01\x00\x00\x00\x00"))
	f.Add([]byte("\x04\x00\x00\x00\x00"))
	f.Add([]byte("\x04\x00\x00\x00\x01x"))
	f.Add([]byte("\x05\x00\x00\x00\x00"))
	f.Add([]byte("\x01\x00\x00\x00\x01x"))
	f.Add([]byte("\x00\xff\xff\xff\xff"))
	f.Add([]byte("\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bufio.NewReaderSize(bytes.NewReader(data), callBufferBytes) // as the parent reads
		for {
			frame, fault, err := readCall(r)
			if err == io.EOF {
				return
			}
			var re *ReportError
			if err != nil {
				if !errors.As(err, &re) {
					t.Fatalf("untyped %v", err)
				}
				return
			}
			if len(frame) > MaxMessageBytes || (fault != "" && len(frame) != 0) {
				t.Fatalf("call %d bytes, fault %q", len(frame), fault)
			}
		}
	})
}

func TestLoadWire(t *testing.T) {
	var buf bytes.Buffer
	want := childLoad{BuildDir: "/cache/apysup/wasi/k", CompilationCacheDir: "/cache/apysup/wazero", Zoneinfo: true, MemoryBytes: 64 << 20,
		Wasm:       fileID{Dev: 2049, Ino: 17, Size: 8 << 20, MtimeNs: 1, CtimeNs: 2},
		Stdlib:     fileID{Dev: 2049, Ino: 18, Size: 12 << 20, MtimeNs: 3, CtimeNs: 4},
		WasmSHA256: strings.Repeat("0f", 32), OSRelease: []byte("ID=debian\nVERSION_ID=\"12\"\n")}
	if err := writeLoad(&buf, want); err != nil {
		t.Fatal(err)
	}
	buf.WriteString(`{"script":""}`) // the job follows, unread
	if got, err := readLoad(&buf); err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("read %+v %v", got, err)
	}
	if buf.String() != `{"script":""}` {
		t.Fatalf("read into the job: %q left", buf.String())
	}
	for _, tc := range []struct{ name, data string }{
		{"empty", ""},
		{"short head", "\x00\x00"},
		{"too long", "\x00\x01\x00\x00{}"},
		{"truncated", "\x00\x00\x00\x10{}"},
		{"no cache", "\x00\x00\x00\x02{}"},
		{"unknown field", "\x00\x00\x00\x0b{\"uid\":0}  "},
		{"trailing", "\x00\x00\x00\x2b{\"compilation_cache_dir\":\"/c\"}{\"zoneinfo\":1}"},
		{"nul", "\x00\x00\x00\x24{\"compilation_cache_dir\":\"/c\\u0000\"}"},
		{"no memory limit", "\x00\x00\x00\x1e{\"compilation_cache_dir\":\"/c\"}"},
		{"no build files", "\x00\x00\x00\x2f{\"compilation_cache_dir\":\"/c\",\"memory_bytes\":1}"},
		{"no stdlib", "\x00\x00\x00\x41{\"compilation_cache_dir\":\"/c\",\"memory_bytes\":1,\"wasm\":{\"size\":1}}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got, err := readLoad(strings.NewReader(tc.data)); err == nil {
				t.Fatalf("accepted %+v", got)
			}
		})
	}
	// A valid load but for python.wasm's digest.
	for name, digest := range map[string]string{
		"no digest":         "",
		"short digest":      strings.Repeat("0f", 31),
		"upper-case digest": strings.Repeat("0F", 32),
		"non-hex digest":    strings.Repeat("0g", 32),
		"long digest":       strings.Repeat("0f", 33),
	} {
		t.Run(name, func(t *testing.T) {
			bad := want
			bad.WasmSHA256 = digest
			var buf bytes.Buffer
			if err := writeLoad(&buf, bad); err != nil {
				t.Fatal(err)
			}
			if got, err := readLoad(&buf); err == nil {
				t.Fatalf("accepted %+v", got)
			}
		})
	}
}

// The load message comes down the child's job pipe before anything else:
// whatever is there, readLoad answers a load naming a compilation cache,
// reading no more than its bound, or an error.
func FuzzReadLoad(f *testing.F) {
	var buf bytes.Buffer
	_ = writeLoad(&buf, childLoad{BuildDir: "/b", CompilationCacheDir: "/c", Zoneinfo: true, MemoryBytes: 1 << 20,
		Wasm: fileID{Ino: 1, Size: 1}, Stdlib: fileID{Ino: 2, Size: 2}, WasmSHA256: strings.Repeat("ab", 32)})
	f.Add(buf.Bytes())
	f.Add([]byte("\x00\x00\x00\x02{}"))
	f.Add([]byte("\xff\xff\xff\xff"))
	f.Add([]byte("\x00\x00\x00\x05null "))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		load, err := readLoad(r)
		if read := len(data) - r.Len(); read > 4+maxLoadBytes {
			t.Fatalf("read %d bytes", read)
		}
		if err != nil {
			if !reflect.DeepEqual(load, childLoad{}) {
				t.Fatalf("%v with %+v", err, load)
			}
			return
		}
		if load.CompilationCacheDir == "" || strings.ContainsRune(load.CompilationCacheDir+load.BuildDir, 0) || load.MemoryBytes == 0 ||
			load.Wasm.Size <= 0 || load.Stdlib.Size <= 0 || len(load.WasmSHA256) != 64 {
			t.Fatalf("accepted %+v", load)
		}
	})
}
