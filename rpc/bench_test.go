package rpc

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
)

// benchScript makes N echo-like calls from the guest and reports the
// latency of each as the guest sees it. "bridge" times
// _agent_runtime_host.call on a prepared frame; "runtime" times the whole
// public path (echo.say -> agent_runtime._capability_call -> bridge -> decode).
const benchScript = `
import sys, time, agent_runtime, echo
import _agent_runtime_host as host
mode, n = sys.argv[1], int(sys.argv[2])
lat = []
clock = time.perf_counter_ns
if mode == "bridge":
    frames = [b'{"call_id":"capability-%d","capability":"echo.say","arguments":{"text":"hello, world","n":%d}}' % (i, i) for i in range(1, n + 1)]
    start = clock()
    for f in frames:
        t = clock()
        host.call(f)
        lat.append(clock() - t)
else:
    start = clock()
    for i in range(n):
        t = clock()
        echo.say(text="hello, world", n=i)
        lat.append(clock() - t)
total = clock() - start
lat.sort()
agent_runtime.set_result({"p50": lat[len(lat) // 2], "p99": lat[min(len(lat) - 1, len(lat) * 99 // 100)], "total": total})
`

func BenchmarkGuestCall(b *testing.B) {
	for _, mode := range []string{"bridge", "runtime"} {
		b.Run(mode, func(b *testing.B) {
			needPython(b)
			n := max(b.N, 100)
			res, err := RunUnsandboxed(context.Background(), UnsandboxedJob{
				Script:     []byte(benchScript),
				Args:       []string{mode, strconv.Itoa(n)},
				Prelude:    []byte(benchPrelude),
				Dispatcher: newFakeBroker(),
				PlanSHA256: testPlan,
				RunID:      "run-bench",
				Limits:     ChannelLimits{MaxCalls: n + 1, MaxCachedBytes: 1 << 30},
			})
			if err != nil {
				b.Fatal(err)
			}
			out, err := ParseOutcome(res.Outcome)
			if err != nil || out.ExitCode != 0 {
				b.Fatalf("%v exit %d\n%s", err, res.ExitCode, res.Stderr)
			}
			var m struct{ P50, P99, Total float64 }
			if err := json.Unmarshal(out.Result, &m); err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(m.P50/1e3, "p50-us")
			b.ReportMetric(m.P99/1e3, "p99-us")
			b.ReportMetric(float64(n)/(m.Total/1e9), "calls/s")
		})
	}
}

// benchPrelude is what plan.Present generates for one echo capability,
// kept literal so the benchmark measures the channel, not plan sealing.
const benchPrelude = `
import sys as _sys, types as _types, agent_runtime as _rt
_rt._bind(None)
_m = _types.ModuleType("echo")
_sys.modules["echo"] = _m
def _say(**arguments):
    return _rt._capability_call("echo.say", arguments)
_m.say = _say
`
