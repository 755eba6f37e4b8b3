package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/serve/sse"
)

// A manifest whose grant policy holds a marker: no response may carry it.
const grantMarker = "Paris-grant-marker-7a1f"

var echoManifest = `{"schema_version": "apysup.manifest.v1", "max_calls": 4,
 "capabilities": [{"name": "weather.get", "version": "1", "effect": "read", "playback": "live",
   "handler": {"kind": "builtin", "id": "echo", "version": "1"},
   "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}},
   "python": {"module": "weather", "function": "get"}}],
 "grants": [{"capability": "weather.get", "policy": {"arguments": {"properties": {"city": {"enum": ["` + grantMarker + `"]}}}}}]}`

func newTestServer(t *testing.T, cfg Config) *Server {
	t.Helper()
	if cfg.StateDir == "" {
		cfg.StateDir = t.TempDir()
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

// apiCall serves one request and checks its answer against the OpenAPI
// document: the status is one the route documents, and the body
// validates against that status's schema.
type apiCall struct {
	t   *testing.T
	s   *Server
	h   http.Handler
	doc openAPIDoc
	sch *schemas
}

func newAPICall(t *testing.T, s *Server) *apiCall {
	doc := loadOpenAPI(t)
	return &apiCall{t: t, s: s, h: s.Handler(), doc: doc, sch: newSchemas(doc)}
}

func (a *apiCall) do(method, target, body string, wantStatus int) *httptest.ResponseRecorder {
	a.t.Helper()
	req := httptest.NewRequest(method, target, strings.NewReader(body))
	rec := httptest.NewRecorder()
	a.h.ServeHTTP(rec, req)
	if rec.Code != wantStatus {
		a.t.Fatalf("%s %s: status %d, want %d: %s", method, target, rec.Code, wantStatus, rec.Body)
	}
	a.checkDocumented(method, req.URL.Path, rec)
	if strings.Contains(rec.Body.String(), grantMarker) {
		a.t.Errorf("%s %s: the response carries grant content", method, target)
	}
	return rec
}

// checkDocumented validates a response of a routed request against the
// document.
func (a *apiCall) checkDocumented(method, path string, rec *httptest.ResponseRecorder) {
	a.t.Helper()
	var pattern string
	for p := range a.doc.Paths {
		if matchPath(p, path) {
			pattern = p
		}
	}
	if pattern == "" {
		var e Error
		if json.Unmarshal(rec.Body.Bytes(), &e) != nil || (e.Code != CodeNotFound && e.Code != CodeMethodNotAllowed) {
			a.t.Errorf("%s %s: unrouted, answered %s", method, path, rec.Body)
		}
		return
	}
	op, ok := a.doc.Paths[pattern][strings.ToLower(method)]
	if !ok {
		return // 405: checked by its test
	}
	resp, ok := op.Responses[strconv.Itoa(rec.Code)]
	if !ok {
		a.t.Errorf("%s %s: status %d is not documented", method, pattern, rec.Code)
		return
	}
	if c, ok := resp.Content["application/json"]; ok {
		validate(a.t, a.sch.compile(a.t, c.Schema), rec.Body.Bytes(), method+" "+pattern+" "+strconv.Itoa(rec.Code))
	}
}

// matchPath matches /v1/runs/{id} style templates.
func matchPath(template, path string) bool {
	ts, ps := strings.Split(template, "/"), strings.Split(path, "/")
	if len(ts) != len(ps) {
		return false
	}
	for i := range ts {
		if !strings.HasPrefix(ts[i], "{") && ts[i] != ps[i] {
			return false
		}
	}
	return true
}

func errorCode(t *testing.T, rec *httptest.ResponseRecorder) string {
	t.Helper()
	var e Error
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil {
		t.Fatalf("not an Error: %s", rec.Body)
	}
	return e.Code
}

func TestPlansAreSealedOnceAndKeepGrantsOnTheHost(t *testing.T) {
	s := newTestServer(t, Config{})
	a := newAPICall(t, s)
	body := `{"manifest": ` + echoManifest + `}`
	var first, second PlanResponse
	json.Unmarshal(a.do("POST", "/v1/plans", body, 200).Body.Bytes(), &first)
	json.Unmarshal(a.do("POST", "/v1/plans", body, 200).Body.Bytes(), &second)
	if first.PlanSHA256 == "" || first.PlanSHA256 != second.PlanSHA256 || len(first.Tools) != 1 || first.Tools[0].Name != "weather.get" {
		t.Fatalf("plans: %+v %+v", first, second)
	}
	sp := s.plans.get(first.PlanSHA256)
	if sp == nil {
		t.Fatal("the Plan is not cached")
	}
	s.plans.release(sp)
	if sp.refs != 1 || len(s.plans.byID) != 1 {
		t.Errorf("sealed again or leaked: refs %d, cached %d", sp.refs, len(s.plans.byID))
	}
}

func TestPlanCacheIsBounded(t *testing.T) {
	s := newTestServer(t, Config{MaxPlans: 2})
	a := newAPICall(t, s)
	for _, n := range []string{"2", "3", "4", "5"} {
		a.do("POST", "/v1/plans", `{"manifest": `+strings.Replace(echoManifest, `"max_calls": 4`, `"max_calls": `+n, 1)+`}`, 200)
	}
	if len(s.plans.byID) != 2 || len(s.plans.order) != 2 {
		t.Errorf("cached %d Plans, want 2", len(s.plans.byID))
	}
}

func TestRefusals(t *testing.T) {
	s := newTestServer(t, Config{})
	a := newAPICall(t, s)
	exec := strings.Replace(echoManifest, `"kind": "builtin", "id": "echo"`, `"kind": "exec", "id": "x"`, 1)
	for _, c := range []struct {
		name, method, target, body string
		status                     int
		code                       string
	}{
		{"unknown field", "POST", "/v1/runs", `{"source": "pass", "sourc": 1}`, 400, CodeInvalidRequest},
		{"two values", "POST", "/v1/runs", `{"source": "pass"} {}`, 400, CodeInvalidRequest},
		{"no source", "POST", "/v1/runs", `{}`, 400, CodeInvalidRequest},
		{"bad wait", "POST", "/v1/runs?wait=stream", `{"source": "pass"}`, 400, CodeInvalidRequest},
		{"wrong type", "POST", "/v1/runs", `{"source": 1}`, 400, CodeInvalidRequest},
		{"limit out of range", "POST", "/v1/runs", `{"source": "pass", "limits": {"cpus": 5000}}`, 400, CodeInvalidRequest},
		{"bad backend", "POST", "/v1/runs", `{"source": "pass", "backend": "docker"}`, 400, CodeInvalidRequest},
		{"script name with a slash", "POST", "/v1/runs", `{"source": "pass", "script_name": "../x.py"}`, 400, CodeInvalidRequest},
		{"script name of the prelude", "POST", "/v1/runs", `{"source": "pass", "script_name": "prelude.py"}`, 400, CodeInvalidRequest},
		{"hidden script name", "POST", "/v1/runs", `{"source": "pass", "script_name": ".argv"}`, 400, CodeInvalidRequest},
		{"script name with NUL", "POST", "/v1/runs", `{"source": "pass", "script_name": "a\u0000b"}`, 400, CodeInvalidRequest},
		{"long script name", "POST", "/v1/runs", `{"source": "pass", "script_name": "` + strings.Repeat("x", 256) + `"}`, 400, CodeInvalidRequest},
		{"bad approve", "POST", "/v1/runs", `{"source": "pass", "approve": "prompt"}`, 400, CodeInvalidRequest},
		{"plan and manifest", "POST", "/v1/runs", `{"source": "pass", "plan_sha256": "sha256:00", "manifest": {}}`, 400, CodeInvalidRequest},
		{"escaping workspace", "POST", "/v1/runs", `{"source": "pass", "workspace": {"../x": ""}}`, 400, "workspace_input_invalid"},
		{"file and dir", "POST", "/v1/runs", `{"source": "pass", "workspace": {"a": "", "a/b": ""}}`, 400, "workspace_input_invalid"},
		{"bad wait", "POST", "/v1/runs?wait=maybe", `{"source": "pass"}`, 400, CodeInvalidRequest},
		{"unknown plan", "POST", "/v1/runs", `{"source": "pass", "plan_sha256": "sha256:00"}`, 404, CodePlanNotFound},
		{"bad manifest", "POST", "/v1/plans", `{"manifest": {"schema_version": "nope"}}`, 400, "invalid_manifest"},
		{"no manifest", "POST", "/v1/plans", `{}`, 400, CodeInvalidRequest},
		{"exec handler", "POST", "/v1/plans", `{"manifest": ` + exec + `}`, 403, CodeHandlerNotAllowed},
		{"unknown run", "GET", "/v1/runs/run-nope", ``, 404, CodeRunNotFound},
		{"cancel unknown run", "POST", "/v1/runs/run-nope/cancel", ``, 404, CodeRunNotFound},
		{"events of unknown run", "GET", "/v1/runs/run-nope/events", ``, 404, CodeRunNotFound},
		{"unknown approval", "POST", "/v1/approvals/apr-nope/approve", ``, 404, CodeApprovalNotFound},
		{"unknown route", "GET", "/v1/nope", ``, 404, CodeNotFound},
		{"wrong method", "DELETE", "/v1/runs", ``, 405, CodeMethodNotAllowed},
		{"too large", "POST", "/v1/runs", `{"source": "` + strings.Repeat("x", MaxRequestBytes) + `"}`, 413, CodeRequestTooLarge},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.t = t
			rec := a.do(c.method, c.target, c.body, c.status)
			if got := errorCode(t, rec); got != c.code {
				t.Errorf("error_code %q, want %q", got, c.code)
			}
		})
	}
}

// TestOverloadedAndCancelWhileQueued: with max-concurrent 1, no queue and
// the one slot busy, a first run is admitted and waits; a second is
// refused with 429 and Retry-After; the waiting run, cancelled, ends
// killed (canceled) without starting.
func TestOverloadedAndCancelWhileQueued(t *testing.T) {
	s := newTestServer(t, Config{MaxConcurrent: 1, Queue: -1})
	a := newAPICall(t, s)
	s.slots <- struct{}{} // the one slot is busy: the next run queues
	var acc RunAccepted
	json.Unmarshal(a.do("POST", "/v1/runs?wait=false", `{"source": "pass"}`, 202).Body.Bytes(), &acc)
	rec := a.do("POST", "/v1/runs", `{"source": "pass"}`, 429)
	if errorCode(t, rec) != CodeOverloaded || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("429 without its code or Retry-After: %v %s", rec.Header(), rec.Body)
	}
	var st RunState
	json.Unmarshal(a.do("GET", "/v1/runs/"+acc.RunID, "", 200).Body.Bytes(), &st)
	if st.State != StateQueued {
		t.Fatalf("state %q, want queued", st.State)
	}
	metrics := httptest.NewRecorder()
	s.Handler().ServeHTTP(metrics, httptest.NewRequest("GET", "/metrics", nil))
	if !strings.Contains(metrics.Body.String(), "apysup_requests_refused_total{code=\"overloaded\"} 1") {
		t.Errorf("metrics without the 429:\n%s", metrics.Body)
	}
	a.do("POST", "/v1/runs/"+acc.RunID+"/cancel", "", 202)
	<-s.lookup(acc.RunID).done
	json.Unmarshal(a.do("GET", "/v1/runs/"+acc.RunID, "", 200).Body.Bytes(), &st)
	if st.State != StateFinished || st.Result == nil || st.Result.Status != "killed" || st.Result.ErrorCode != "canceled" {
		t.Fatalf("cancelled queued run: %+v", st)
	}
	<-s.slots
	metrics = httptest.NewRecorder()
	s.Handler().ServeHTTP(metrics, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{`apysup_runs_total{status="killed"} 1`, "apysup_run_duration_seconds_count 1",
		"apysup_queue_depth 0", "apysup_pool_ready 0", "apysup_approvals_pending 0"} {
		if !strings.Contains(metrics.Body.String(), want) {
			t.Errorf("metrics without %q:\n%s", want, metrics.Body)
		}
	}
}

func TestFinishedRunsAreBounded(t *testing.T) {
	s := newTestServer(t, Config{MaxConcurrent: 1, Queue: 4, MaxFinished: 2})
	a := newAPICall(t, s)
	s.slots <- struct{}{}
	var ids []string
	for range 3 {
		var acc RunAccepted
		json.Unmarshal(a.do("POST", "/v1/runs?wait=false", `{"source": "pass"}`, 202).Body.Bytes(), &acc)
		a.do("POST", "/v1/runs/"+acc.RunID+"/cancel", "", 202)
		<-s.lookup(acc.RunID).done
		ids = append(ids, acc.RunID)
	}
	<-s.slots
	a.do("GET", "/v1/runs/"+ids[0], "", 404)
	a.do("GET", "/v1/runs/"+ids[2], "", 200)
}

// TestFinishedRunsAreBoundedInBytes: the finished runs kept for GET let
// the oldest go once their output and history pass MaxFinishedBytes, and
// the newest is kept even when it alone is larger.
func TestFinishedRunsAreBoundedInBytes(t *testing.T) {
	s := newTestServer(t, Config{MaxFinishedBytes: 250 << 10})
	finish := func(id string, out int) {
		r := &run{id: id, events: newRunEvents(), result: &RunResult{}}
		r.result.Stdout = strings.Repeat("x", out)
		r.events.publish(EventStdout, map[string]string{"data": r.result.Stdout})
		s.keepFinished(r)
	}
	finish("a", 50<<10)
	finish("b", 50<<10)
	if s.lookup("a") == nil || s.lookup("b") == nil {
		t.Fatal("two small runs within the bound were not both kept")
	}
	finish("c", 50<<10) // a, b and c keep about 300 KiB: a goes
	if s.lookup("a") != nil || s.lookup("b") == nil || s.lookup("c") == nil {
		t.Errorf("kept a %v, b %v, c %v; want b and c", s.lookup("a") != nil, s.lookup("b") != nil, s.lookup("c") != nil)
	}
	finish("d", 1<<20) // larger than the bound alone
	if s.lookup("b") != nil || s.lookup("c") != nil || s.lookup("d") == nil || s.kept != runBytes(s.lookup("d")) {
		t.Errorf("after a run larger than the bound: kept %d bytes, b %v, c %v, d %v", s.kept, s.lookup("b") != nil, s.lookup("c") != nil, s.lookup("d") != nil)
	}
}

func TestHealthApprovalsAndDocument(t *testing.T) {
	s := newTestServer(t, Config{})
	a := newAPICall(t, s)
	var h Health
	json.Unmarshal(a.do("GET", "/v1/health", "", 200).Body.Bytes(), &h)
	if h.Backends["native"].Code == "" || h.Backends["wazero"].Code == "" {
		t.Errorf("health without backend codes: %+v", h)
	}
	a.do("GET", "/v1/approvals", "", 200)
	if body := a.do("GET", "/v1/openapi.json", "", 200).Body.String(); body != string(OpenAPI) {
		t.Error("the served document is not openapi.json")
	}
}

func TestDrainingRefusesRuns(t *testing.T) {
	s := newTestServer(t, Config{})
	a := newAPICall(t, s)
	s.mu.Lock()
	s.draining = true
	s.mu.Unlock()
	if rec := a.do("POST", "/v1/runs", `{"source": "pass"}`, 503); errorCode(t, rec) != CodeShuttingDown {
		t.Error(rec.Body)
	}
}

// blockingStream is a streaming ResponseWriter whose first write waits
// for release: the stream's reader is slow.
type blockingStream struct {
	header  http.Header
	first   chan struct{} // closed when the first write begins
	release chan struct{}
	once    sync.Once
	mu      sync.Mutex
	body    bytes.Buffer
}

func newBlockingStream() *blockingStream {
	return &blockingStream{header: http.Header{}, first: make(chan struct{}), release: make(chan struct{})}
}

func (b *blockingStream) Header() http.Header { return b.header }
func (b *blockingStream) WriteHeader(int)     {}
func (b *blockingStream) Flush()              {}
func (b *blockingStream) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.first); <-b.release })
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.body.Write(p)
}

// TestStreamOfItsOwnRunOutlivesALag: a stream that falls behind ends with
// lagged (GET /v1/runs/{id}/events); the run's own stream (POST
// ?wait=events) goes on after lagged to the run's result, so that a slow
// reader never ends, and so cancels, the run it waits for.
func TestStreamOfItsOwnRunOutlivesALag(t *testing.T) {
	s := newTestServer(t, Config{})
	for _, untilResult := range []bool{false, true} {
		r := &run{id: "run-lagged", events: newRunEvents(), done: make(chan struct{}), state: StateRunning}
		r.events.publish(EventState, map[string]string{"state": StateRunning}) // the first write, held
		w := newBlockingStream()
		ended := make(chan struct{})
		go func() {
			s.streamEvents(w, httptest.NewRequest("POST", "/v1/runs?wait=events", nil), r, untilResult)
			close(ended)
		}()
		<-w.first
		for range subscriberQueue + 1 {
			r.events.publish(EventStdout, map[string]string{"data": "x"})
		}
		close(w.release)
		r.mu.Lock()
		r.state, r.result = StateFinished, &RunResult{SchemaVersion: RunResultSchema}
		r.mu.Unlock()
		close(r.done)
		<-ended
		var names []string
		for ev, err := range sse.Read(bytes.NewReader(w.body.Bytes())) {
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, ev.Name)
		}
		want := []string{EventLagged}
		if untilResult {
			want = append(want, EventResult)
		}
		if len(names) < len(want) || !slices.Equal(names[len(names)-len(want):], want) || slices.Contains(names[:len(names)-len(want)], EventResult) {
			t.Errorf("until the result %v: the stream ends %v, want %v", untilResult, names[max(len(names)-3, 0):], want)
		}
	}
}

// --allow-handlers allows kinds besides builtin, as docs/api.md says;
// `--allow-handlers exec` used to refuse every builtin handler.
func TestAllowHandlersAddToBuiltin(t *testing.T) {
	for _, allowed := range [][]string{nil, {"exec"}, {"http", "kv"}} {
		got := Config{AllowHandlers: allowed}.withDefaults().AllowHandlers
		if !slices.Contains(got, "builtin") {
			t.Errorf("%v: %v, want builtin among them", allowed, got)
		}
		for _, k := range allowed {
			if !slices.Contains(got, k) {
				t.Errorf("%v: %v lost %s", allowed, got, k)
			}
		}
	}
}
