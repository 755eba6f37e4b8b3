package serve

import (
	"strings"
	"testing"
)

// TestEventHistoryIsBounded: a run that prints a lot keeps at most
// maxHistoryBytes of events for late streams, and always its result; a
// stream that was there from the start gets every event.
func TestEventHistoryIsBounded(t *testing.T) {
	h := newRunEvents()
	_, live, cancel := h.subscribe()
	defer cancel()
	chunk := map[string]string{"data": strings.Repeat("x", 64<<10)}
	const chunks = 64 // 4 MiB
	got := 0
	for range chunks {
		h.publish(EventStdout, chunk)
		<-live
		got++
	}
	h.publish(EventResult, map[string]string{"status": "ok"})
	if ev := <-live; ev.Name != EventResult {
		t.Fatalf("the live stream's last event is %q, want result", ev.Name)
	}
	if got != chunks {
		t.Fatalf("the live stream got %d chunks, want %d", got, chunks)
	}
	past, _, _ := h.subscribe()
	size := 0
	for _, ev := range past {
		size += len(ev.Data)
	}
	if size > maxHistoryBytes+64 || len(past) >= chunks {
		t.Errorf("a late stream gets %d events, %d bytes: the history is not bounded by %d bytes", len(past), size, maxHistoryBytes)
	}
	if past[len(past)-1].Name != EventResult {
		t.Errorf("the history's last event is %q, want the result", past[len(past)-1].Name)
	}
}
