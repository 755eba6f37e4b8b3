// Package sse reads the Server-Sent Events stream of a run
// (GET /v1/runs/{id}/events), for the API's Go clients: serve.Client and
// the early client of `apysup run --server`, which runs before most of
// the binary initialises and so must import nothing of the project's.
package sse

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"iter"
	"strings"
)

// Event is one event: its name and its JSON data.
type Event struct {
	Name string
	Data json.RawMessage
}

// MaxEventBytes bounds one event's data (a result holds two 1 MiB
// outputs, JSON-escaped, and the ledger).
const MaxEventBytes = 64 << 20

// Read parses a Server-Sent Events stream: "event:" and "data:" lines, an
// event per blank line; comments, "id:" and "retry:" are skipped. A line
// longer than MaxEventBytes ends it with an error.
func Read(r io.Reader) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), MaxEventBytes)
		var ev Event
		var data []byte
		for sc.Scan() {
			line := sc.Text()
			if line == "" {
				if ev.Name != "" || data != nil {
					if ev.Name == "" {
						ev.Name = "message"
					}
					ev.Data = json.RawMessage(data)
					if !yield(ev, nil) {
						return
					}
				}
				ev, data = Event{}, nil
				continue
			}
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				ev.Name = value
			case "data":
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, value...)
				if len(data) > MaxEventBytes {
					yield(Event{}, fmt.Errorf("serve: an event is larger than %d bytes", MaxEventBytes))
					return
				}
			}
		}
		if err := sc.Err(); err != nil {
			yield(Event{}, err)
		}
	}
}
