package sse

import (
	"strings"
	"testing"
)

// TestRead: events end at a blank line, data lines join with newlines,
// comments and ids are skipped, an unnamed event is "message".
func TestRead(t *testing.T) {
	stream := ": hello\nid: 1\nevent: state\ndata: {\"state\":\"running\"}\n\ndata: a\ndata: b\n\nevent: result\ndata: {}\n\n"
	var got []string
	for ev, err := range Read(strings.NewReader(stream)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Name+"="+string(ev.Data))
	}
	if want := []string{`state={"state":"running"}`, "message=a\nb", "result={}"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// FuzzRead: the parser ends on any stream, and every event it yields has
// a name.
func FuzzRead(f *testing.F) {
	f.Add([]byte("id: 1\nevent: state\ndata: {\"state\":\"running\"}\n\nevent: result\ndata: {}\n\n"))
	f.Add([]byte(": comment\ndata: a\ndata: b\n\n\n"))
	f.Add([]byte("event:x\r\ndata:\r\n\r\n"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		for ev, err := range Read(strings.NewReader(string(stream))) {
			if err == nil && ev.Name == "" {
				t.Fatal("an event without a name")
			}
		}
	})
}
