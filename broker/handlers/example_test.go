package handlers_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/plan"
)

// Build a manifest's handlers and run a Broker over them.
func ExampleBuild() {
	dir, _ := os.MkdirTemp("", "apysup-example")
	defer os.RemoveAll(dir)
	manifest := `{"schema_version": "apysup.manifest.v1", "max_calls": 8,
	 "capabilities": [
	  {"name": "notes.put", "version": "1", "effect": "write", "playback": "live",
	   "handler": {"kind": "kv", "id": "notes-put", "version": "1",
	               "config": {"path": "` + filepath.Join(dir, "notes.db") + `", "op": "put", "namespace": "notes"}},
	   "input_schema": {"type": "object"}, "output_schema": {"type": "object"}},
	  {"name": "clock.now", "version": "1", "effect": "read", "playback": "live",
	   "handler": {"kind": "builtin", "id": "clock.now", "version": "1"},
	   "input_schema": {"type": "object"}, "output_schema": {"type": "object"}}],
	 "grants": [{"capability": "notes.put", "policy": {}}, {"capability": "clock.now", "policy": {}}]}`
	m, err := plan.ParseManifest([]byte(manifest))
	if err != nil {
		panic(err)
	}
	p, err := m.Seal(handlers.Checker{})
	if err != nil {
		panic(err)
	}
	hs, closer, err := handlers.Build(m, handlers.Options{Now: func() time.Time { return time.UnixMilli(1700000000000) }})
	if err != nil {
		panic(err)
	}
	defer closer.Close()
	b, err := broker.New(broker.Config{Plan: p, RunID: "example", Surface: plan.SurfaceDirect, Handlers: hs})
	if err != nil {
		panic(err)
	}
	for _, frame := range []string{
		`{"call_id": "capability-1", "capability": "notes.put", "arguments": {"key": "todo", "value": ["write docs"]}}`,
		`{"call_id": "capability-2", "capability": "clock.now", "arguments": {}}`,
	} {
		r := b.Call(context.Background(), []byte(frame))
		var result any
		decode(r.Result, &result)
		fmt.Println(r.Status, result)
	}
	// Output:
	// ok map[key:todo stored:true]
	// ok map[unix_ms:1.7e+12]
}

func decode(data []byte, v any) {
	if err := json.Unmarshal(data, v); err != nil {
		panic(err)
	}
}
