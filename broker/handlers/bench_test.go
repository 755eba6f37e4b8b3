package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/apysup/apysup/broker"
)

// The cost of one handler call, without the broker around it.

func BenchmarkExecCall(b *testing.B) {
	h := handlerOf(b, Options{}, capability{name: "tool.cat", kind: "exec", config: `{"argv":["/bin/cat"]}`}).(broker.Handler)
	args := json.RawMessage(`{"text":"hello"}`)
	for b.Loop() {
		if _, err := h.Call(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkHTTPCall(b *testing.B) {
	t := &testing.T{}
	srv, host := testServer(t)
	defer srv.Close()
	h := handlerOf(b, Options{}, httpCapability("web.get", "GET", srv.URL+"/echo/{city}", host, ``)).(broker.EvidenceHandler)
	args := json.RawMessage(`{"city":"Oslo"}`)
	for b.Loop() {
		if _, _, err := h.CallWithEvidence(context.Background(), args); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkKV(b *testing.B) {
	file := filepath.Join(b.TempDir(), "kv.db")
	put := handlerOf(b, Options{}, kvCapability("kv.put", file, KVPut, "")).(broker.Handler)
	get := handlerOf(b, Options{}, kvCapability("kv.get", file, KVGet, "")).(broker.Handler)
	b.Run("put", func(b *testing.B) {
		i := 0
		for b.Loop() {
			i++
			if _, err := put.Call(context.Background(), json.RawMessage(fmt.Sprintf(`{"key":"k%d","value":{"n":%d}}`, i%1000, i))); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("get", func(b *testing.B) {
		for b.Loop() {
			if _, err := get.Call(context.Background(), json.RawMessage(`{"key":"k1"}`)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
