package broker

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/apysup/apysup/plan"
)

// BenchmarkCallEcho measures Broker.Call for builtin/echo without approval.
func BenchmarkCallEcho(b *testing.B) {
	r, _ := plan.NewRegistry(plan.MaxCallsLimit)
	_ = r.Register(plan.Spec{Name: "echo", Version: "1", Effect: plan.EffectRead, Playback: plan.PlaybackLive, Handler: EchoIdentity(),
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`)})
	g, _ := plan.NewGrant(json.RawMessage(`{}`))
	_ = r.Bind("echo", g)
	p, err := r.Seal()
	if err != nil {
		b.Fatal(err)
	}
	hs := NewHandlers()
	_ = hs.Add(EchoIdentity(), Echo{})
	frames := make([][]byte, plan.MaxCallsLimit)
	for i := range frames {
		frames[i] = []byte(`{"call_id":"capability-` + strconv.Itoa(i+1) + `","capability":"echo","arguments":{"city":"Paris"}}`)
	}
	b.ReportAllocs()
	var br *Broker
	for i := 0; b.Loop(); i++ {
		if i%plan.MaxCallsLimit == 0 { // a fresh run every 256 calls (max_calls)
			b.StopTimer()
			br, _ = New(Config{Plan: p, RunID: "bench", Surface: plan.SurfaceDirect, Handlers: hs})
			b.StartTimer()
		}
		// With its wire form, as a transport sends it: the work Call did
		// when it returned bytes.
		br.Call(context.Background(), frames[i%plan.MaxCallsLimit]).AppendJSON(nil)
	}
}
