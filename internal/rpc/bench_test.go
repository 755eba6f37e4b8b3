package rpc

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/plan"
)

// benchScript makes N echo calls from the guest and reports the latency of
// each as the guest sees it. "bridge" times _agent_runtime_host.call on a
// prepared frame; "runtime" times the whole public path (echo.say ->
// agent_runtime._capability_call -> bridge -> decode -> json.loads);
// "httpclient" is "bridge" with http.client instead of the bridge's client.
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
elif mode == "httpclient":
    # The same requests through the standard library's http.client, kept
    # alive: the baseline the hand-written client in the bridge replaces.
    import http.client, json, os, socket, _agent_runtime_wire as wire
    with open(os.environ["APYSUP_CHANNEL_FILE"]) as f:
        ch = json.load(f)
    class UnixConnection(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.connect(ch["socket"])
    conn = UnixConnection("apysup")
    headers = {"Authorization": "Apysup-Credential " + ch["credential"], "Content-Type": "application/json"}
    prefix = ('{"schema_version":"apysup.rpc.v1","channel_id":%s,"invocation_id":%s,"execution_id":%s,"plan_sha256":%s,"call":' % tuple(
        json.dumps(ch[k]) for k in ("channel_id", "invocation_id", "execution_id", "plan_sha256"))).encode()
    frames = [prefix + b'{"call_id":"capability-%d","capability":"echo.say","arguments":{"text":"hello, world","n":%d}}}' % (i, i) for i in range(1, n + 1)]
    start = clock()
    for f in frames:
        t = clock()
        conn.request("POST", "/v1/calls", body=f, headers=headers)
        wire.decode(conn.getresponse().read())
        lat.append(clock() - t)
else:
    start = clock()
    for i in range(n):
        t = clock()
        echo.say(text="hello, world", n=i)
        lat.append(clock() - t)
agent_runtime.set_result({"lat": lat, "total": clock() - start})
`

// benchManifest: one builtin echo capability, at the Plan's max_calls.
const benchManifest = `{"schema_version": "apysup.manifest.v1", "max_calls": 256, "capabilities": [
 {"name": "echo.say", "version": "1", "description": "Echo.", "effect": "read", "playback": "live",
  "handler": {"kind": "builtin", "id": "echo", "version": "1"},
  "input_schema": {"type": "object"}, "output_schema": {},
  "python": {"module": "echo", "function": "say"}}],
 "grants": [{"capability": "echo.say", "policy": {}}]}`

// BenchmarkGuestCall measures echo round trips from a python3.11 guest
// through the socket, the registry and a Dispatcher: "fake" is a minimal
// Dispatcher (the channel alone), "broker" the real Broker with the
// builtin echo handler (at most 256 calls per run, the Plan's max_calls).
// Metrics: p50-us and p99-us per call as the guest sees it, calls/s.
func BenchmarkGuestCall(b *testing.B) {
	for _, backend := range []string{"fake", "broker"} {
		for _, mode := range []string{"bridge", "runtime", "httpclient"} {
			b.Run(backend+"/"+mode, func(b *testing.B) {
				needPython(b)
				perRun := 50000
				if backend == "broker" {
					perRun = 250
				}
				var lat []float64
				var total float64
				for left := max(b.N, 100); left > 0; left -= perRun {
					n := min(left, perRun)
					l, t := benchRun(b, backend, mode, n)
					lat = append(lat, l...)
					total += t
				}
				slices.Sort(lat)
				b.ReportMetric(lat[len(lat)/2]/1e3, "p50-us")
				b.ReportMetric(lat[len(lat)*99/100]/1e3, "p99-us")
				b.ReportMetric(float64(len(lat))/(total/1e9), "calls/s")
			})
		}
	}
}

func benchRun(b *testing.B, backend, mode string, n int) ([]float64, float64) {
	m, p := seal(b, benchManifest)
	pr, err := p.Present(plan.SurfaceDirect, "")
	if err != nil {
		b.Fatal(err)
	}
	var d broker.Dispatcher = newFakeBroker()
	if backend == "broker" {
		hs, closer, err := handlers.Build(m, handlers.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer closer.Close()
		d, err = broker.New(broker.Config{Plan: p, RunID: "run-bench", Surface: plan.SurfaceDirect, Handlers: hs})
		if err != nil {
			b.Fatal(err)
		}
	}
	res, err := RunUnsandboxed(context.Background(), UnsandboxedJob{
		Script:     []byte(benchScript),
		Args:       []string{mode, strconv.Itoa(n)},
		Prelude:    pr.Prelude,
		Dispatcher: d,
		PlanSHA256: p.Identity(),
		RunID:      "run-bench",
		Limits:     ChannelLimits{MaxCalls: n + 1, MaxCachedBytes: 1 << 30},
	})
	if err != nil {
		b.Fatal(err)
	}
	out, err := sandbox.ParseOutcome(res.Outcome)
	if err != nil || out.ExitCode != 0 {
		b.Fatalf("%v exit %d\n%s", err, res.ExitCode, res.Stderr)
	}
	var r struct {
		Lat   []float64
		Total float64
	}
	if err := json.Unmarshal(out.Result, &r); err != nil || len(r.Lat) != n {
		b.Fatalf("%v: %d latencies", err, len(r.Lat))
	}
	return r.Lat, r.Total
}

// BenchmarkDispatch is the registry's share of a call: parse, authenticate,
// digest, record, dispatch (to a Dispatcher that answers a constant).
func BenchmarkDispatch(b *testing.B) {
	reg := NewRegistry(RegistryConfig{})
	_, cred, err := reg.Open(ChannelConfig{
		ChannelID: "ch-1", InvocationID: "inv-1", ExecutionID: "run-1", PlanSHA256: testPlan,
		Expiry: time.Now().Add(time.Hour), PeerUID: testUID, Limits: ChannelLimits{MaxCalls: b.N + 1},
		Dispatcher: dispatcherFunc(func(context.Context, []byte) *broker.Response {
			return &broker.Response{SchemaVersion: broker.ResponseSchemaVersion, CallID: "x", Status: "ok", Result: json.RawMessage(`{}`)}
		}),
	})
	if err != nil {
		b.Fatal(err)
	}
	defer reg.Close("ch-1")
	bodies := make([][]byte, b.N)
	for i := range bodies {
		bodies[i] = envelopeFor(frame("capability-"+strconv.Itoa(i+1), "echo.say", `{"text":"hello, world","n":1}`))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if status, resp := reg.Dispatch(context.Background(), testUID, cred, bodies[i]); status != 200 {
			b.Fatalf("%d %s", status, resp)
		}
	}
}

// floorScript makes N round trips of one small HTTP request on one kept-
// alive Unix socket with nothing but socket calls, and prints the median
// in microseconds: what two processes' wake-ups and the kernel cost on
// this machine, under everything the channel adds.
const floorScript = `
import socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
s = socket.socket(socket.AF_UNIX)
s.connect(path)
req = b"POST /v1/calls HTTP/1.1\r\nHost: apysup\r\nContent-Length: 2\r\n\r\n{}"
lat = []
for _ in range(n):
    t = time.perf_counter_ns()
    s.sendall(req)
    d = s.recv(65536)
    while not d.endswith(b"{}"):
        d += s.recv(65536)
    lat.append(time.perf_counter_ns() - t)
lat.sort()
print(lat[len(lat) // 2] / 1e3)
`

// BenchmarkTransportFloor is what BenchmarkGuestCall's calls stand on: a
// python3.11 client's round trips to a Go server on a Unix socket that
// answers every request with the same bytes, read with one read(2)
// ("raw"), or through net/http ("nethttp"), as the channel's server is.
// Metric: p50-us as the guest sees it.
func BenchmarkTransportFloor(b *testing.B) {
	const answer = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"
	for _, mode := range []string{"raw", "nethttp"} {
		b.Run(mode, func(b *testing.B) {
			needPython(b)
			path := filepath.Join(b.TempDir(), "s")
			l, err := net.Listen("unix", path)
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			if mode == "raw" {
				go func() {
					c, err := l.Accept()
					if err != nil {
						return
					}
					defer c.Close()
					buf := make([]byte, 4096)
					for {
						if _, err := c.Read(buf); err != nil {
							return
						}
						if _, err := io.WriteString(c, answer); err != nil {
							return
						}
					}
				}()
			} else {
				srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
					w.Header()["Content-Type"] = []string{"application/json"}
					_, _ = io.WriteString(w, "{}")
				})}
				go func() { _ = srv.Serve(l) }()
				defer srv.Close()
			}
			n := max(b.N, 1000)
			b.ResetTimer()
			out, err := exec.Command(HostPython, "-I", "-S", "-c", floorScript, path, strconv.Itoa(n)).Output()
			if err != nil {
				b.Fatal(err)
			}
			p50, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
			if err != nil {
				b.Fatalf("%v: %q", err, out)
			}
			b.ReportMetric(p50, "p50-us")
		})
	}
}
