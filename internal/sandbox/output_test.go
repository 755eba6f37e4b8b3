package sandbox

import (
	"bytes"
	"strings"
	"testing"
)

// TestCaptureDelivers: what the Output receives is exactly what is kept,
// in order per stream, never beyond the limit, and Close returns after the
// last call.
func TestCaptureDelivers(t *testing.T) {
	c := NewCapture(10)
	var got [2]bytes.Buffer
	first := make(chan struct{})
	c.Deliver(func(stream string, chunk []byte) {
		if len(chunk) == 0 {
			t.Error("an empty chunk")
		}
		if got[index(stream)].Len() == 0 && stream == Stdout {
			close(first)
		}
		got[index(stream)].Write(chunk)
	})
	out, errw := c.Writer(Stdout), c.Writer(Stderr)
	out.Write([]byte("hello "))
	<-first // delivered while the writer is still open
	errw.Write([]byte("warn"))
	if n, err := out.Write([]byte("world, and more")); n != 15 || err != nil {
		t.Fatalf("a write past the limit returned %d, %v", n, err)
	}
	out.Write([]byte("dropped"))
	c.Close()
	c.Close()
	stdout, stderr, tout, terr := c.Kept()
	if string(stdout) != "hello worl" || string(stderr) != "warn" || !tout || terr {
		t.Fatalf("kept %q %q %v %v", stdout, stderr, tout, terr)
	}
	if got[0].String() != string(stdout) || got[1].String() != string(stderr) {
		t.Fatalf("delivered %q %q", got[0].String(), got[1].String())
	}
}

// TestCaptureNeverWaitsForTheOutput: a blocked Output holds no writer;
// what it missed is delivered when it returns, before Close does.
func TestCaptureNeverWaitsForTheOutput(t *testing.T) {
	c := NewCapture(1 << 20)
	entered, release := make(chan struct{}), make(chan struct{})
	var got strings.Builder
	c.Deliver(func(_ string, chunk []byte) {
		if got.Len() == 0 {
			close(entered)
			<-release
		}
		got.Write(chunk)
	})
	w := c.Writer(Stdout)
	w.Write([]byte("a"))
	<-entered
	for range 1000 {
		w.Write([]byte("b")) // would deadlock if a write waited for the Output
	}
	c.Lost(Stdout)
	close(release)
	c.Close()
	stdout, _, truncated, _ := c.Kept()
	if got.String() != string(stdout) || len(stdout) != 1001 || !truncated {
		t.Fatalf("delivered %d bytes, kept %d, truncated %v", got.Len(), len(stdout), truncated)
	}
}

// TestCaptureWithoutOutput keeps and bounds the same way; Deliver after
// Close does nothing.
func TestCaptureWithoutOutput(t *testing.T) {
	c := NewCapture(3)
	c.Writer(Stderr).Write([]byte("abcdef"))
	c.Close()
	c.Deliver(func(string, []byte) { t.Error("delivered after Close") })
	_, stderr, _, terr := c.Kept()
	if string(stderr) != "abc" || !terr {
		t.Fatalf("%q %v", stderr, terr)
	}
	exact := NewCapture(2)
	exact.Writer(Stdout).Write([]byte("ab"))
	if _, _, tout, _ := exact.Kept(); tout {
		t.Fatal("truncated at exactly the limit")
	}
}
