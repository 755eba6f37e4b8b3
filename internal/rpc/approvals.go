package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/apysup/apysup/broker"
)

// The admin API of a run's approvals (HTTP/1.1, JSON, on a Unix socket):
//
//	GET  /v1/approvals[?wait=D]      {"now", "pending": [PendingRequest]}
//	GET  /v1/approvals/records       {"now", "records": [ApprovalRecord]}  (no previews)
//	POST /v1/approvals/{id}/approve  {"record": ApprovalRecord}
//	POST /v1/approvals/{id}/reject   {"record": ApprovalRecord}
//
// A record (broker.ApprovalRecord) says what it approves: "run_id",
// "plan_sha256", "parent_call_id" (programmatic calls only), "call_id",
// "capability" and "arguments_sha256" (a digest, never the arguments); its
// decision, "state": waiting, then approved, rejected, expired or cancelled,
// never changed once decided; and "dispatch", what became of an approved
// call: none, dispatched, then completed or ambiguous (with "outcome"), or
// cancelled or expired before dispatch (nothing ran). A refusal is
// {"error_code": ..., "state"?: ...} with the status below.
const ApprovalsPath = "/v1/approvals"

// Error codes of the admin API.
const (
	CodeApprovalNotFound       = "approval_not_found"       // 404
	CodeApprovalAlreadyDecided = "approval_already_decided" // 409, with the state it is in
	CodeMalformedRequest       = "malformed_request"        // 400
	CodeForbidden              = "forbidden"                // 403: the peer's uid is not allowed
	CodeInternalError          = "internal_error"           // 500: the controller failed otherwise
	// not_found (404), method_not_allowed (405) and request_too_large (413)
	// are shared with the channel (codes.go).
)

// Bounds of the admin API.
const (
	// MaxApprovalBodyBytes bounds a POST body (which must be empty or {}).
	MaxApprovalBodyBytes = 4 << 10
	// MaxApprovalWait bounds how long GET /v1/approvals?wait=D holds.
	MaxApprovalWait = time.Minute
)

// ApprovalList is the answer to GET /v1/approvals.
type ApprovalList struct {
	Now     time.Time               `json:"now"`
	Pending []broker.PendingRequest `json:"pending"`
}

// ApprovalRecords is the answer to GET /v1/approvals/records.
type ApprovalRecords struct {
	Now     time.Time               `json:"now"`
	Records []broker.ApprovalRecord `json:"records"`
}

// ApprovalDecision is the answer to a successful approve or reject.
type ApprovalDecision struct {
	Record broker.ApprovalRecord `json:"record"`
}

// ApprovalError is a typed refusal of the admin API.
type ApprovalError struct {
	HTTPStatus int                  `json:"-"`
	Code       string               `json:"error_code"`
	State      broker.ApprovalState `json:"state,omitempty"` // with approval_already_decided
}

// ErrorCode is the error's stable code.
func (e *ApprovalError) ErrorCode() string { return e.Code }

func (e *ApprovalError) Error() string {
	if e.State != "" {
		return e.Code + " (" + string(e.State) + ")"
	}
	return e.Code
}

// ApprovalServer serves the admin API of one approval controller. Only
// peers whose SO_PEERCRED uid is the server process's own, or root, are
// answered; the socket's mode 0600 keeps the others from connecting at all.
type ApprovalServer struct {
	unixServer
	a   *broker.Approvals
	uid uint32 // the one uid besides root that is answered
}

// NewApprovalServer returns a server for a. Zero fields of cfg take the
// defaults of DefaultServerConfig.
func NewApprovalServer(a *broker.Approvals, cfg ServerConfig) *ApprovalServer {
	s := &ApprovalServer{a: a, uid: uint32(os.Getuid())}
	s.unixServer = newUnixServer(s, cfg)
	return s
}

// ListenApprovalSocket creates the admin socket at path, mode 0600. It
// refuses a path that exists: the socket is always fresh, never a stale or
// someone else's file. Closing the listener removes the socket.
func ListenApprovalSocket(path string) (*net.UnixListener, error) {
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("rpc: socket path longer than %d bytes: %s", maxSocketPath, path)
	}
	if _, err := os.Lstat(path); err == nil {
		return nil, fmt.Errorf("rpc: %s: %w", path, os.ErrExist)
	}
	// bind(2) itself refuses an existing path (EADDRINUSE), so a file
	// created since the Lstat is not replaced either.
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("rpc: listen: %w", err)
	}
	// Between bind and chmod the mode is what the umask allows; a peer that
	// connects then is still refused by the SO_PEERCRED check.
	if err := os.Chmod(path, 0o600); err != nil {
		l.Close()
		return nil, fmt.Errorf("rpc: socket mode: %w", err)
	}
	return l, nil
}

func (s *ApprovalServer) allowed(p peer) bool { return p.ok && (p.uid == 0 || p.uid == s.uid) }

// ServeHTTP answers the admin API.
func (s *ApprovalServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p, _ := r.Context().Value(peerKey{}).(peer); !s.allowed(p) {
		refuse(w, &ApprovalError{HTTPStatus: http.StatusForbidden, Code: CodeForbidden})
		return
	}
	// Route on the escaped path: an id is one segment, whatever it holds.
	rest, ok := strings.CutPrefix(r.URL.EscapedPath(), ApprovalsPath)
	switch {
	case !ok:
		refuse(w, &ApprovalError{HTTPStatus: http.StatusNotFound, Code: CodeNotFound})
	case rest == "":
		if onlyMethod(w, r, http.MethodGet) {
			s.list(w, r)
		}
	case rest == "/records":
		if onlyMethod(w, r, http.MethodGet) && noQuery(w, r) {
			recs := s.a.Records()
			answer(w, ApprovalRecords{Now: time.Now(), Records: recs})
		}
	default:
		seg, action, ok := strings.Cut(strings.TrimPrefix(rest, "/"), "/")
		id, err := url.PathUnescape(seg)
		if !ok || err != nil || (action != "approve" && action != "reject") {
			refuse(w, &ApprovalError{HTTPStatus: http.StatusNotFound, Code: CodeNotFound})
			return
		}
		if onlyMethod(w, r, http.MethodPost) && noQuery(w, r) {
			s.decide(w, r, id, action)
		}
	}
}

// list answers the waiting requests; with ?wait=D it holds until one is
// waiting or D (at most MaxApprovalWait) has passed, so that a watcher
// need not poll.
func (s *ApprovalServer) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var wait time.Duration
	for k, v := range q {
		d, err := time.ParseDuration(strings.Join(v, ""))
		if k != "wait" || len(v) != 1 || err != nil || d < 0 || d > MaxApprovalWait {
			refuse(w, &ApprovalError{HTTPStatus: http.StatusBadRequest, Code: CodeMalformedRequest})
			return
		}
		wait = d
	}
	pending := s.a.Pending()
	if len(pending) == 0 && wait > 0 {
		pending = s.waitPending(r.Context(), w, wait)
	}
	if pending == nil {
		pending = []broker.PendingRequest{}
	}
	answer(w, ApprovalList{Now: time.Now(), Pending: pending})
}

func (s *ApprovalServer) waitPending(ctx context.Context, w http.ResponseWriter, wait time.Duration) []broker.PendingRequest {
	events, cancel := s.a.Subscribe()
	defer cancel()
	// The write deadline covers writing the answer, not waiting for it.
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	defer rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		// Subscribed first, read second: a request opened in between is
		// seen here or announced by an event.
		if p := s.a.Pending(); len(p) > 0 {
			return p
		}
		select {
		case <-events:
		case <-timer.C:
			return nil
		case <-ctx.Done():
			return nil
		}
	}
}

func (s *ApprovalServer) decide(w http.ResponseWriter, r *http.Request, id, action string) {
	if !validApprovalID(id) {
		refuse(w, &ApprovalError{HTTPStatus: http.StatusBadRequest, Code: CodeMalformedRequest})
		return
	}
	if !emptyBody(w, r) {
		return
	}
	decide := s.a.Approve
	if action == "reject" {
		decide = s.a.Reject
	}
	err := decide(id)
	rec, found := s.a.Get(id)
	switch {
	case errors.Is(err, broker.ErrApprovalNotFound) || !found:
		refuse(w, &ApprovalError{HTTPStatus: http.StatusNotFound, Code: CodeApprovalNotFound})
	case errors.Is(err, broker.ErrApprovalDecided):
		refuse(w, &ApprovalError{HTTPStatus: http.StatusConflict, Code: CodeApprovalAlreadyDecided, State: rec.State})
	case err != nil:
		refuse(w, &ApprovalError{HTTPStatus: http.StatusInternalServerError, Code: CodeInternalError})
	default:
		answer(w, ApprovalDecision{Record: rec})
	}
}

// validApprovalID accepts the controller's ids: "apr_" and 24 lowercase hex.
func validApprovalID(id string) bool {
	hex, ok := strings.CutPrefix(id, "apr_")
	if !ok || len(hex) != 24 {
		return false
	}
	for _, c := range []byte(hex) {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// emptyBody accepts no body, or an empty JSON object: a decision carries
// nothing but its id and verb. It answers the refusal itself.
func emptyBody(w http.ResponseWriter, r *http.Request) bool {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxApprovalBodyBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		refuse(w, &ApprovalError{HTTPStatus: http.StatusRequestEntityTooLarge, Code: CodeRequestTooLarge})
		return false
	}
	if err == nil && len(bytes.TrimSpace(body)) > 0 && !isEmptyObject(body) {
		err = errors.New("body is not {}")
	}
	if err != nil {
		refuse(w, &ApprovalError{HTTPStatus: http.StatusBadRequest, Code: CodeMalformedRequest})
		return false
	}
	return true
}

func isEmptyObject(body []byte) bool {
	var m map[string]json.RawMessage
	return json.Unmarshal(body, &m) == nil && m != nil && len(m) == 0
}

func onlyMethod(w http.ResponseWriter, r *http.Request, method string) bool {
	if r.Method == method {
		return true
	}
	w.Header().Set("Allow", method)
	refuse(w, &ApprovalError{HTTPStatus: http.StatusMethodNotAllowed, Code: CodeMethodNotAllowed})
	return false
}

func noQuery(w http.ResponseWriter, r *http.Request) bool {
	if r.URL.RawQuery == "" {
		return true
	}
	refuse(w, &ApprovalError{HTTPStatus: http.StatusBadRequest, Code: CodeMalformedRequest})
	return false
}

func refuse(w http.ResponseWriter, e *ApprovalError) {
	body, _ := json.Marshal(e)
	w.Header().Set("Connection", "close")
	reply(w, e.HTTPStatus, body)
}

func answer(w http.ResponseWriter, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		refuse(w, &ApprovalError{HTTPStatus: http.StatusInternalServerError, Code: CodeInternalError})
		return
	}
	reply(w, http.StatusOK, body)
}

// ApprovalClient speaks the admin API over the socket at a path.
type ApprovalClient struct {
	http *http.Client
}

// NewApprovalClient returns a client of the admin socket at path. timeout
// bounds each request (a list with wait gets wait on top).
func NewApprovalClient(path string, timeout time.Duration) *ApprovalClient {
	var d net.Dialer
	return &ApprovalClient{http: &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
				return d.DialContext(ctx, "unix", path)
			},
			MaxResponseHeaderBytes: 8 << 10,
			DisableKeepAlives:      true,
		},
	}}
}

// maxApprovalResponseBytes bounds what the client reads: the audit's
// records with their previews fit well within it.
const maxApprovalResponseBytes = 16 << 20

// List returns the waiting requests; wait > 0 holds until one is waiting.
func (c *ApprovalClient) List(ctx context.Context, wait time.Duration) (*ApprovalList, error) {
	path := ApprovalsPath
	if wait > 0 {
		path += "?wait=" + wait.String()
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, wait+c.http.Timeout)
		defer cancel()
	}
	var out ApprovalList
	return &out, c.do(ctx, http.MethodGet, path, &out, wait > 0)
}

// Records returns the whole audit, without previews.
func (c *ApprovalClient) Records(ctx context.Context) (*ApprovalRecords, error) {
	var out ApprovalRecords
	return &out, c.do(ctx, http.MethodGet, ApprovalsPath+"/records", &out, false)
}

// Approve and Reject decide one waiting request.
func (c *ApprovalClient) Approve(ctx context.Context, id string) (*broker.ApprovalRecord, error) {
	return c.decide(ctx, id, "approve")
}

func (c *ApprovalClient) Reject(ctx context.Context, id string) (*broker.ApprovalRecord, error) {
	return c.decide(ctx, id, "reject")
}

func (c *ApprovalClient) decide(ctx context.Context, id, action string) (*broker.ApprovalRecord, error) {
	var out ApprovalDecision
	if err := c.do(ctx, http.MethodPost, ApprovalsPath+"/"+url.PathEscape(id)+"/"+action, &out, false); err != nil {
		return nil, err
	}
	return &out.Record, nil
}

func (c *ApprovalClient) do(ctx context.Context, method, path string, out any, long bool) error {
	req, err := http.NewRequestWithContext(ctx, method, "http://apysup"+path, nil)
	if err != nil {
		return err
	}
	hc := c.http
	if long {
		copied := *c.http
		copied.Timeout = 0 // the context bounds it
		hc = &copied
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxApprovalResponseBytes+1))
	if err != nil {
		return err
	}
	if len(body) > maxApprovalResponseBytes {
		return fmt.Errorf("rpc: admin response larger than %d bytes", maxApprovalResponseBytes)
	}
	if resp.StatusCode != http.StatusOK {
		e := &ApprovalError{HTTPStatus: resp.StatusCode}
		if json.Unmarshal(body, e) != nil || e.Code == "" {
			return fmt.Errorf("rpc: admin answered %s without an error code", resp.Status)
		}
		return e
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("rpc: admin answer: %w", err)
	}
	return nil
}
