package sandbox

import (
	"errors"
	"testing"
)

func TestLimitsWithDefaults(t *testing.T) {
	got, err := Limits{}.WithDefaults()
	if err != nil || got != DefaultLimits() {
		t.Fatalf("zero limits: %+v, %v", got, err)
	}
	got, err = Limits{MemoryBytes: 64 << 20, OutputBytes: 100}.WithDefaults()
	if err != nil || got.MemoryBytes != 64<<20 || got.OutputBytes != 100 || got.Pids != DefaultLimits().Pids {
		t.Fatalf("partial limits: %+v, %v", got, err)
	}
	again, err := got.WithDefaults()
	if err != nil || again != got {
		t.Fatalf("not idempotent: %+v, %v", again, err)
	}
}

// Every limit out of range is reported at once, each by its field, and
// the whole refusal has the one code invalid_limits.
func TestLimitsWithDefaultsRefuses(t *testing.T) {
	_, err := Limits{Timeout: -1, MemoryBytes: 1 << 20, Pids: -1, CPUs: 0.001, TmpBytes: -1, OutputBytes: -1,
		OpenFiles: 3, FileSizeBytes: -1, WorkspaceBytes: -1, WorkspaceFiles: -1}.WithDefaults()
	var list LimitErrors
	if !errors.As(err, &list) {
		t.Fatalf("error %T %v", err, err)
	}
	want := []string{"timeout", "memory_bytes", "pids", "cpus", "tmp_bytes", "output_bytes", "open_files",
		"file_size_bytes", "workspace_bytes", "workspace_files"}
	if len(list) != len(want) {
		t.Fatalf("got %d problems, want %d: %v", len(list), len(want), err)
	}
	for i, f := range want {
		if list[i].Field != f {
			t.Errorf("problem %d: field %q, want %q", i, list[i].Field, f)
		}
	}
	var one *LimitError
	if !errors.As(err, &one) || one.ErrorCode() != CodeInvalidLimits {
		t.Fatalf("code: %v", err)
	}
}
