package serve

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/sandbox/doctor"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/internal/sandbox/wazero"
	"github.com/apysup/apysup/plan"
)

// OpenAPI is the API's OpenAPI 3.1 document, served at
// GET /v1/openapi.json (docs/api.md describes the same).
//
//go:embed openapi.json
var OpenAPI []byte

// route is one of the API's routes: a net/http pattern and its handler.
type route struct {
	pattern string // "METHOD /path/{param}"
	handle  func(*Server, http.ResponseWriter, *http.Request)
}

// routes are every route the API serves (the OpenAPI document lists the
// same: TestOpenAPIAgreesWithRouter).
var routes = []route{
	{"POST /v1/plans", (*Server).postPlan},
	{"POST /v1/runs", (*Server).postRun},
	{"GET /v1/runs/{id}", (*Server).getRun},
	{"POST /v1/runs/{id}/cancel", (*Server).cancelRun},
	{"GET /v1/runs/{id}/events", (*Server).runEvents},
	{"GET /v1/approvals", (*Server).listApprovals},
	{"POST /v1/grants/revoke", (*Server).revokeGrant},
	{"POST /v1/approvals/{id}/approve", func(s *Server, w http.ResponseWriter, r *http.Request) { s.decideApproval(w, r, true) }},
	{"POST /v1/approvals/{id}/reject", func(s *Server, w http.ResponseWriter, r *http.Request) { s.decideApproval(w, r, false) }},
	{"GET /v1/health", (*Server).health},
	{"GET /v1/openapi.json", func(_ *Server, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(OpenAPI)
	}},
	{"GET /metrics", func(s *Server, w http.ResponseWriter, r *http.Request) { s.metrics.handler().ServeHTTP(w, r) }},
}

// Handler is the API, unauthenticated: a Listener's check goes in front
// of it (Serve does that).
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	for _, rt := range routes {
		mux.HandleFunc(rt.pattern, func(w http.ResponseWriter, r *http.Request) { rt.handle(s, w, r) })
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			s.fail(w, unrouted(mux, r))
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// unrouted is the typed refusal of a request no route serves: 405 when
// the path has a route for another method.
func unrouted(mux *http.ServeMux, r *http.Request) *Error {
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := mux.Handler(probe); pattern != "" {
			return refusal(CodeMethodNotAllowed, "method not allowed")
		}
	}
	return refusal(CodeNotFound, "no such route")
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}

func (s *Server) fail(w http.ResponseWriter, e *Error) {
	s.metrics.refused.WithLabelValues(e.Code).Inc()
	if e.Code == CodeOverloaded {
		w.Header().Set("Retry-After", strconv.Itoa(int((s.cfg.RetryAfter+time.Second-1)/time.Second)))
	}
	writeJSON(w, HTTPStatus(e.Code), e)
}

// readBody reads a bounded body.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *Error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxRequestBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, refusal(CodeRequestTooLarge, "the body is larger than %d bytes", MaxRequestBytes)
	case err != nil:
		return nil, refusal(CodeInvalidRequest, "the body could not be read")
	}
	return body, nil
}

func asError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	return refusal(CodeInternal, "internal error")
}

func (s *Server) postPlan(w http.ResponseWriter, r *http.Request) {
	body, e := readBody(w, r)
	if e != nil {
		s.fail(w, e)
		return
	}
	req, err := ParsePlanRequest(body)
	if err != nil {
		s.fail(w, asError(err))
		return
	}
	sp, err := s.plans.seal(req.Manifest)
	if err != nil {
		s.fail(w, asError(err))
		return
	}
	defer s.plans.release(sp)
	writeJSON(w, http.StatusOK, PlanResponse{PlanSHA256: sp.plan.Identity(), Tools: sp.tools})
}

// How POST /v1/runs answers (its wait parameter).
const (
	waitResult = "true"   // the RunResult, when the run ends (the default)
	waitNone   = "false"  // 202 and the run id at once
	waitEvents = "events" // the run's event stream, the result last
)

// RunIDHeader names the run in the answer of POST /v1/runs?wait=events,
// whose body is its event stream (a client cancels the run by its id).
const RunIDHeader = "Apysup-Run-Id"

func (s *Server) postRun(w http.ResponseWriter, r *http.Request) {
	wait := r.URL.Query().Get("wait")
	switch wait {
	case "":
		wait = waitResult
	case waitResult, waitNone:
	case waitEvents:
		if _, ok := w.(http.Flusher); !ok {
			s.fail(w, refusal(CodeInternal, "streaming unsupported"))
			return
		}
	default:
		s.fail(w, refusal(CodeInvalidRequest, "wait must be true, false or events"))
		return
	}
	body, e := readBody(w, r)
	if e != nil {
		s.fail(w, e)
		return
	}
	v, err := ParseRunRequest(body)
	if err != nil {
		s.fail(w, asError(err))
		return
	}
	sp, err := s.resolvePlan(v)
	if err != nil {
		s.fail(w, asError(err))
		return
	}
	// A client that waits, for the result or on the stream, is the run's:
	// when it leaves, the run is cancelled.
	var parent = r.Context()
	if wait == waitNone {
		parent = nil
	}
	run, e := s.admit(parent, v.IdempotencyKey)
	if e != nil {
		s.plans.release(sp)
		s.fail(w, e)
		return
	}
	go s.execute(run, v, sp)
	switch wait {
	case waitNone:
		writeJSON(w, http.StatusAccepted, RunAccepted{RunID: run.id})
		return
	case waitEvents:
		w.Header().Set(RunIDHeader, run.id)
		s.streamEvents(w, r, run, true)
		return
	}
	<-run.done
	st := run.snapshot()
	writeJSON(w, http.StatusOK, st.Result)
}

// resolvePlan is the run's Plan, held: by digest from the cache, sealed
// from its manifest, or the empty Plan.
func (s *Server) resolvePlan(v *validRun) (*sealedPlan, error) {
	switch {
	case v.PlanSHA256 != "":
		if sp := s.plans.get(v.PlanSHA256); sp != nil {
			return sp, nil
		}
		return nil, refusal(CodePlanNotFound, "no Plan with that digest is cached: POST /v1/plans first")
	case len(v.Manifest) > 0:
		return s.plans.seal(v.Manifest)
	}
	s.plans.mu.Lock()
	s.empty.refs++
	s.plans.mu.Unlock()
	return s.empty, nil
}

// revokeGrant revokes a capability's grant at the provider that serves the
// cached Plan's runs (the same handler instances): docs/acceptance.md.
func (s *Server) revokeGrant(w http.ResponseWriter, r *http.Request) {
	body, e := readBody(w, r)
	if e != nil {
		s.fail(w, e)
		return
	}
	req, err := ParseRevokeRequest(body)
	if err != nil {
		s.fail(w, asError(err))
		return
	}
	sp := s.plans.get(req.PlanSHA256)
	if sp == nil {
		s.fail(w, refusal(CodePlanNotFound, "no Plan with that digest is cached: POST /v1/plans first"))
		return
	}
	defer s.plans.release(sp)
	rev, err := broker.RevokeGrant(r.Context(), sp.plan, sp.handlers, req.Capability)
	if err != nil {
		s.fail(w, refusal(plan.CodeOf(err), "%s", broker.Message(plan.CodeOf(err))))
		return
	}
	writeJSON(w, http.StatusOK, rev)
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	run := s.lookup(r.PathValue("id"))
	if run == nil {
		s.fail(w, refusal(CodeRunNotFound, "no such run"))
		return
	}
	writeJSON(w, http.StatusOK, run.snapshot())
}

func (s *Server) cancelRun(w http.ResponseWriter, r *http.Request) {
	run := s.lookup(r.PathValue("id"))
	if run == nil {
		s.fail(w, refusal(CodeRunNotFound, "no such run"))
		return
	}
	run.cancel()
	writeJSON(w, http.StatusAccepted, run.snapshot())
}

// runEvents streams a run's events as Server-Sent Events: what happened
// so far, then live, ending with the result.
func (s *Server) runEvents(w http.ResponseWriter, r *http.Request) {
	run := s.lookup(r.PathValue("id"))
	if run == nil {
		s.fail(w, refusal(CodeRunNotFound, "no such run"))
		return
	}
	if _, ok := w.(http.Flusher); !ok {
		s.fail(w, refusal(CodeInternal, "streaming unsupported"))
		return
	}
	s.streamEvents(w, r, run, false)
}

// streamEvents streams a run's events as Server-Sent Events: what
// happened so far, then live, ending with the result. A stream that falls
// behind gets a lagged event; it ends there, unless untilResult (the
// run's own request, POST ?wait=events), which then waits for the run and
// ends with its result: a slow reader must not end the run it waits for.
func (s *Server) streamEvents(w http.ResponseWriter, r *http.Request, run *run, untilResult bool) {
	flusher := w.(http.Flusher)
	past, live, cancel := run.events.subscribe()
	defer cancel()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	sawResult := false
	send := func(ev streamEvent) bool {
		sawResult = sawResult || ev.Name == EventResult
		_, err := fmt.Fprintf(w, "id: %d\nevent: %s\ndata: %s\n\n", ev.Seq, ev.Name, ev.Data)
		flusher.Flush()
		return err == nil
	}
	for _, ev := range past {
		if !send(ev) {
			return
		}
	}
	for {
		select {
		case <-r.Context().Done():
			return
		case ev, ok := <-live:
			if !ok {
				if sawResult {
					return
				}
				msg := "the stream fell behind; GET the run for its result"
				if untilResult {
					msg = "the stream fell behind: events were dropped; the result follows"
				}
				data, _ := json.Marshal(Error{Code: CodeEventsLagged, Message: msg})
				send(streamEvent{Name: EventLagged, Data: data})
				if !untilResult {
					return
				}
				select {
				case <-r.Context().Done():
				case <-run.done:
					if data, err := json.Marshal(run.snapshot().Result); err == nil {
						send(streamEvent{Name: EventResult, Data: data})
					}
				}
				return
			}
			if !send(ev) {
				return
			}
		}
	}
}

func (s *Server) listApprovals(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"approvals": s.pendingApprovals()})
}

func (s *Server) decideApproval(w http.ResponseWriter, r *http.Request, approve bool) {
	d, e := s.decide(r.PathValue("id"), approve)
	if e != nil {
		s.fail(w, e)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// Health is GET /v1/health.
type Health struct {
	Status   string                     `json:"status"` // ok, degraded (a backend is unavailable) or draining
	Running  int                        `json:"running"`
	Queued   int                        `json:"queued"`
	Pool     supervisor.PoolState       `json:"pool"`
	Wazero   supervisor.WazeroPoolState `json:"wazero_pool"`
	Backends map[string]BackendHealth   `json:"backends"`
}

// BackendHealth is one backend's readiness: Code is "ok" or the doctor's
// (native) or the WASI build's (wazero) reason code.
type BackendHealth struct {
	Ready  bool   `json:"ready"`
	Code   string `json:"code"`
	Detail string `json:"detail,omitempty"`
}

func (s *Server) health(w http.ResponseWriter, _ *http.Request) {
	running, queued := s.counts()
	h := Health{Status: "ok", Running: running, Queued: queued, Pool: s.sup.PoolState(),
		Wazero: s.sup.WazeroPoolState(), Backends: map[string]BackendHealth{}}
	native := BackendHealth{Ready: true, Code: doctor.CodeOK}
	if c := doctor.Quick().FirstFailure(); c != nil {
		native = BackendHealth{Code: c.Status, Detail: c.Detail}
	}
	wz := BackendHealth{Ready: true, Code: doctor.CodeOK}
	if _, err := wazero.Locate(""); err != nil {
		var ue *wazero.UnavailableError
		wz = BackendHealth{Code: "wazero_unavailable"}
		if errors.As(err, &ue) {
			wz.Code = ue.Code
		}
	}
	h.Backends[supervisor.BackendNative], h.Backends[supervisor.BackendWazero] = native, wz
	if !native.Ready || !wz.Ready {
		h.Status = "degraded"
	}
	s.mu.Lock()
	if s.draining {
		h.Status = "draining"
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, h)
}
