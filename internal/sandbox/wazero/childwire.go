package wazero

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// The wire between a run and its child process (child_linux.go): the load
// message, then (once the child has loaded and there is one) the job go
// down once, host calls go up and their answers down, the child's
// report of its guest's ending comes up once. The parent trusts nothing
// that comes up: the child runs the guest, and a guest that escaped wasm
// would be the child.

// ErrorCodeChildDied: the child process that ran the guest ended without
// a report of how its guest ended that the parent could read (it died, or
// wrote something else). A status error: the child is no more trusted
// than its guest, so its death is the guest's, as a death by signal is
// natively.
const ErrorCodeChildDied = "wasm_child_died"

// childLoad is what a child needs to load its Interpreter besides its
// descriptors: where the build is (for messages), the compilation cache,
// and the identities of the build files its parent checked.
type childLoad struct {
	BuildDir            string `json:"build_dir"`
	CompilationCacheDir string `json:"compilation_cache_dir"`
	// Wasm and Stdlib identify python.wasm and the stdlib zip, open at
	// childWasmFD and childStdlibFD, as the parent checked them: a child
	// maps them only if they are still those versions.
	Wasm   fileID `json:"wasm"`
	Stdlib fileID `json:"stdlib"`
	// WasmSHA256 is python.wasm's digest from the manifest, which the
	// parent checked the file against: the child names the module by it
	// rather than hashing the file again.
	WasmSHA256 string `json:"wasm_sha256"`
	Zoneinfo   bool   `json:"zoneinfo"` // the host's zoneinfo is childZoneinfoFD
	// MemoryBytes is the guest's memory limit until its job's: the guest
	// starts before its job (a fresh child's parent gives the job's own).
	MemoryBytes uint64 `json:"memory_bytes"`
	// OSRelease is the host's os-release (hostOSRelease), at most
	// maxOSReleaseBytes, or nil.
	OSRelease []byte `json:"os_release,omitempty"`
}

// maxLoadBytes bounds the load message: two paths, two file identities,
// a digest, a flag, a number and an os-release (base64).
const maxLoadBytes = 16 << 10

// writeLoad writes the load message that opens the job pipe: its length
// (4 bytes, big-endian) and childLoad as JSON. The job follows, to EOF,
// once there is one: a child loads before its job exists (a pool's).
func writeLoad(w io.Writer, load childLoad) error {
	data, err := json.Marshal(load)
	if err != nil {
		return err
	}
	if len(data) > maxLoadBytes {
		return fmt.Errorf("load message of %d bytes", len(data))
	}
	_, err = w.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(data))), data...))
	return err
}

// readLoad reads the load message as the input from outside it is:
// bounded, one strict JSON object, a compilation cache named.
func readLoad(r io.Reader) (childLoad, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return childLoad{}, fmt.Errorf("load: %w", err)
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > maxLoadBytes {
		return childLoad{}, fmt.Errorf("load: %d bytes", n)
	}
	data := make([]byte, n)
	if _, err := io.ReadFull(r, data); err != nil {
		return childLoad{}, fmt.Errorf("load: %w", err)
	}
	var load childLoad
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&load); err != nil {
		return childLoad{}, errors.New("load: not a load message")
	}
	if _, err := dec.Token(); err != io.EOF {
		return childLoad{}, errors.New("load: trailing data")
	}
	if load.CompilationCacheDir == "" || strings.ContainsRune(load.CompilationCacheDir+load.BuildDir, 0) {
		return childLoad{}, errors.New("load: no compilation cache")
	}
	if load.MemoryBytes == 0 {
		return childLoad{}, errors.New("load: no memory limit")
	}
	if load.Wasm.Size <= 0 || load.Stdlib.Size <= 0 {
		return childLoad{}, errors.New("load: no build files")
	}
	if _, ok := sha256Digest(load.WasmSHA256); !ok {
		return childLoad{}, errors.New("load: no digest of " + wasmFile)
	}
	return load, nil
}

// maxJobBytes bounds the job a child reads after its load message: a
// script of sandbox.MaxScriptBytes and its prelude, base64-encoded, and
// the rest.
const maxJobBytes = 24 << 20

// childReport is the child's account of its guest's ending: one JSON
// object after the optional started byte. Setup is set when the module
// could not be instantiated (then nothing else is); otherwise Ending is.
type childReport struct {
	Setup         string  `json:"setup,omitempty"`
	Ending        endKind `json:"ending,omitempty"`
	ExitCode      uint32  `json:"exit_code,omitempty"`
	Signal        int32   `json:"signal,omitempty"`
	MemoryRefused bool    `json:"memory_refused,omitempty"`
	PeakMemory    uint64  `json:"peak_memory,omitempty"`
	CPUTimeNs     int64   `json:"cpu_time_ns,omitempty"`
}

const (
	// loadedByte opens the result stream when the child has loaded its
	// Interpreter: the run's clock bounds the guest's start from there.
	loadedByte = 'L'
	// startedByte follows the result stream when the guest's runner opened
	// its job: the parent starts the run's clock there.
	startedByte = 'S'
	// maxReportBytes bounds a report; a real one is under 200 bytes.
	maxReportBytes = 4 << 10
	maxSetupBytes  = 1 << 10
)

// ReportError is a child's report that the parent refuses: the run ends
// ErrorCodeChildDied.
type ReportError struct{ Reason string }

func (e *ReportError) Error() string     { return "wazero child report: " + e.Reason }
func (e *ReportError) ErrorCode() string { return ErrorCodeChildDied }

func badReport(format string, args ...any) error {
	return &ReportError{Reason: fmt.Sprintf(format, args...)}
}

// parseReport reads a report (what follows the started byte, if any) as
// the untrusted input it is: bounded, one strict JSON object, fields
// consistent with each other and with the run's memory limit.
func parseReport(data []byte, memoryLimit uint64) (childReport, error) {
	var r childReport
	if len(data) == 0 {
		return r, badReport("none")
	}
	if len(data) > maxReportBytes {
		return r, badReport("longer than %d bytes", maxReportBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return childReport{}, badReport("not a report")
	}
	if _, err := dec.Token(); err != io.EOF {
		return childReport{}, badReport("trailing data")
	}
	switch {
	case r.Setup != "" && r != (childReport{Setup: r.Setup}):
		return childReport{}, badReport("a setup failure with an ending")
	case r.Setup != "" && len(r.Setup) > maxSetupBytes:
		return childReport{}, badReport("setup failure longer than %d bytes", maxSetupBytes)
	case r.Setup != "":
		return r, nil
	}
	if (r.Signal != 0) != (r.Ending == endSignaled) || r.Signal < 0 || r.Signal > maxSignal {
		return childReport{}, badReport("a signal without a death by signal, or out of range")
	}
	switch r.Ending {
	case endReturned, endTrapped, endSignaled:
		if r.ExitCode != 0 {
			return childReport{}, badReport("an exit code without an exit")
		}
	case endExited:
	default:
		return childReport{}, badReport("unknown ending")
	}
	if r.CPUTimeNs < 0 {
		return childReport{}, badReport("negative CPU time")
	}
	if r.PeakMemory > memoryLimit {
		return childReport{}, badReport("peak memory over the limit")
	}
	return r, nil
}

// Host calls on the socketpair. Up: a fault byte (faultCodes' index),
// the frame's length (4 bytes, big-endian) and the frame; or, while a
// call is answered, its give-up (faultGiveUp, no frame). Down: the
// envelope's length and the envelope, length 0 for no envelope to
// deliver, one per call, in order.
var faultCodes = [...]string{"", codeFrameTooLarge, codeFrameEmpty, codeFrameMalformed, faultGiveUp}

// callBufferBytes is the buffer each end reads the socket through: a call
// or an answer of this size or less, its length and itself written at once,
// comes in one read(2), where reading the length first took two.
const callBufferBytes = 64 << 10

func writeCall(w io.Writer, frame []byte, fault string) error {
	idx := -1
	for i, c := range faultCodes {
		if c == fault {
			idx = i
		}
	}
	if idx < 0 || len(frame) > MaxMessageBytes {
		return fmt.Errorf("no such call: fault %q, %d bytes", fault, len(frame))
	}
	head := [5]byte{byte(idx)}
	binary.BigEndian.PutUint32(head[1:], uint32(len(frame)))
	_, err := w.Write(append(head[:], frame...))
	return err
}

// readCall reads one call from the child: io.EOF when it has closed its
// end between calls, a *ReportError when what it sent is no call.
func readCall(r io.Reader) (frame []byte, fault string, err error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		if err == io.ErrUnexpectedEOF {
			return nil, "", badReport("a truncated call")
		}
		return nil, "", err
	}
	n := binary.BigEndian.Uint32(head[1:])
	switch {
	case int(head[0]) >= len(faultCodes):
		return nil, "", badReport("unknown call fault %d", head[0])
	case n > MaxMessageBytes:
		return nil, "", badReport("a call frame of %d bytes", n)
	case head[0] != 0 && n != 0:
		return nil, "", badReport("a call fault with a frame")
	}
	frame = make([]byte, n)
	if _, err := io.ReadFull(r, frame); err != nil {
		return nil, "", badReport("a truncated call")
	}
	return frame, faultCodes[head[0]], nil
}

func writeAnswer(w io.Writer, envelope []byte) error {
	if len(envelope) > MaxMessageBytes {
		envelope = nil // deliver answers -1 either way
	}
	head := binary.BigEndian.AppendUint32(nil, uint32(len(envelope)))
	_, err := w.Write(append(head, envelope...))
	return err
}

// readAnswer reads the parent's answer; nil when there is none to deliver.
func readAnswer(r io.Reader) ([]byte, error) {
	var head [4]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(head[:])
	if n > MaxMessageBytes {
		return nil, errors.New("answer too large")
	}
	if n == 0 {
		return nil, nil
	}
	envelope := make([]byte, n)
	_, err := io.ReadFull(r, envelope)
	return envelope, err
}
