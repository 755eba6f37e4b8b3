package rpc

import (
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/apysup/apysup/internal/spin"
)

// CallsPath is the one path the server answers.
const CallsPath = "/v1/calls"

const credentialScheme = "Apysup-Credential "

// ServerConfig bounds the HTTP side of the channel. Zero values mean the
// defaults of DefaultServerConfig.
type ServerConfig struct {
	MaxHeaderBytes    int
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration // the whole request, body included
	WriteTimeout      time.Duration // writing the response, after the dispatch returned
	IdleTimeout       time.Duration // a kept-alive connection between requests
	// MaxConnections bounds open connections per listener; beyond it a
	// connect waits in the backlog until one closes.
	MaxConnections int
}

// DefaultServerConfig returns the built-in server limits.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		MaxHeaderBytes:    8 << 10,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       5 * time.Minute,
		MaxConnections:    64,
	}
}

func (c ServerConfig) withDefaults() ServerConfig {
	d := DefaultServerConfig()
	return ServerConfig{
		MaxHeaderBytes:    positiveOr(c.MaxHeaderBytes, d.MaxHeaderBytes),
		ReadHeaderTimeout: positiveOr(c.ReadHeaderTimeout, d.ReadHeaderTimeout),
		ReadTimeout:       positiveOr(c.ReadTimeout, d.ReadTimeout),
		WriteTimeout:      positiveOr(c.WriteTimeout, d.WriteTimeout),
		IdleTimeout:       positiveOr(c.IdleTimeout, d.IdleTimeout),
		MaxConnections:    positiveOr(c.MaxConnections, d.MaxConnections),
	}
}

// Server speaks the channel's HTTP/1.1 on Unix sockets and hands every
// request to its Registry.
type Server struct {
	unixServer
	reg *Registry
}

// NewServer returns a Server for reg.
func NewServer(reg *Registry, cfg ServerConfig) *Server {
	s := &Server{reg: reg}
	s.unixServer = newUnixServer(s, cfg)
	s.requestSpin = requestSpin
	return s
}

// requestSpin is how long a connection of the channel polls for its
// guest's next call before it blocks, while the calls come that close
// together (package spin): 25-30 us of a call's wake-ups on a 2-CPU VM.
// requestPolls bounds the windows a Serve polls in all, across its
// connections: 16 times a Plan's largest max_calls, at most 0.8 s of a
// CPU for a guest that times its requests to keep the server polling.
const (
	requestSpin  = 200 * time.Microsecond
	requestPolls = 4096
)

// unixServer is HTTP/1.1 on a Unix socket within the bounds of a
// ServerConfig, with each connection's peer credentials (SO_PEERCRED) in
// its requests' context. The channel server and the approval server share it.
type unixServer struct {
	cfg  ServerConfig
	http *http.Server
	// requestSpin, when not 0, is how long a connection polls for its next
	// request after an answer (peerConn.Read).
	requestSpin time.Duration
}

func newUnixServer(h http.Handler, cfg ServerConfig) unixServer {
	cfg = cfg.withDefaults()
	srv := &http.Server{
		Handler:           h,
		MaxHeaderBytes:    cfg.MaxHeaderBytes,
		ReadHeaderTimeout: cfg.ReadHeaderTimeout,
		ReadTimeout:       cfg.ReadTimeout,
		WriteTimeout:      cfg.WriteTimeout,
		IdleTimeout:       cfg.IdleTimeout,
		ConnContext:       withPeer,
		// "OPTIONS *" reaches the handler, which answers it with a channel
		// code as every request it can read; net/http's own answer was a
		// plain 200.
		DisableGeneralOptionsHandler: true,
		// HTTP/2 is never negotiated on a Unix socket; say so explicitly.
		Protocols: new(http.Protocols),
	}
	srv.Protocols.SetHTTP1(true)
	return unixServer{cfg: cfg, http: srv}
}

// Serve accepts connections on l until Shutdown or Close; it then returns nil.
func (s *unixServer) Serve(l net.Listener) error {
	pl := &peerListener{Listener: l, slots: make(chan struct{}, s.cfg.MaxConnections), spin: s.requestSpin}
	pl.polls.Store(requestPolls)
	err := s.http.Serve(pl)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Shutdown stops accepting, waits for requests in progress until ctx ends.
func (s *unixServer) Shutdown(ctx context.Context) error { return s.http.Shutdown(ctx) }

// Close stops the server and closes every connection now.
func (s *unixServer) Close() error { return s.http.Close() }

type peerKey struct{}

// peer is the connecting process's credentials from SO_PEERCRED.
type peer struct {
	uid uint32
	ok  bool
}

// peerListener bounds the open connections and reads each one's peer
// credentials once, at accept.
type peerListener struct {
	net.Listener
	slots chan struct{}
	spin  time.Duration
	polls atomic.Int64 // the windows its connections may still poll
}

func (l *peerListener) Accept() (net.Conn, error) {
	l.slots <- struct{}{}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return newPeerConn(c, l.spin, &l.polls, func() { <-l.slots }), nil
}

// newPeerConn wraps an accepted connection: its peer's credentials, and
// with spin > 0 a poll for each next request (Read), within polls.
func newPeerConn(c net.Conn, spin time.Duration, polls *atomic.Int64, release func()) *peerConn {
	pc := &peerConn{Conn: c, peer: peerOf(c), release: release}
	if sc, ok := c.(syscall.Conn); ok && spin > 0 {
		if rc, err := sc.SyscallConn(); err == nil {
			pc.rc, pc.spin.Window, pc.spin.Budget = rc, spin, polls
		}
	}
	return pc
}

type peerConn struct {
	net.Conn
	peer    peer
	once    sync.Once
	release func()

	// With a spin: after an answer, the next read polls for the next
	// request first. net/http reads a connection from two goroutines (its
	// loop, and a background read while a handler runs) and writes it from
	// its loop: answered hands the first read after an answer, the loop's
	// for the next request, the news.
	rc       syscall.RawConn
	spin     spin.Adaptive
	answered atomic.Bool
}

// Read polls first when it is the first read after an answer (net/http's
// loop reading the next request) and the requests have come close
// together.
func (c *peerConn) Read(p []byte) (int, error) {
	if c.rc == nil || !c.answered.Swap(false) {
		return c.Conn.Read(p)
	}
	c.spin.Wait(c.rc, runtime.Gosched)
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.spin.Arrived(time.Now())
	}
	return n, err
}

// Write records the answer it wrote, for Read.
func (c *peerConn) Write(p []byte) (int, error) {
	n, err := c.Conn.Write(p)
	if c.rc != nil {
		c.spin.Answered(time.Now())
		c.answered.Store(true)
	}
	return n, err
}

func (c *peerConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func withPeer(ctx context.Context, c net.Conn) context.Context {
	var p peer
	if pc, ok := c.(*peerConn); ok {
		p = pc.peer
	}
	return context.WithValue(ctx, peerKey{}, p)
}

func peerOf(c net.Conn) peer {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return peer{}
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{}
	}
	var p peer
	cerr := raw.Control(func(fd uintptr) {
		if uid, err := peerUID(int(fd)); err == nil {
			p = peer{uid: uid, ok: true}
		}
	})
	if cerr != nil {
		return peer{}
	}
	return p
}

// ServeHTTP answers POST /v1/calls.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Date"] = nil // one less header to format and parse per call
	if r.URL.Path != CallsPath {
		reply(w, http.StatusNotFound, rejected(CodeNotFound))
		return
	}
	if r.Method != http.MethodPost {
		h.Set("Allow", http.MethodPost)
		reply(w, http.StatusMethodNotAllowed, rejected(CodeMethodNotAllowed))
		return
	}
	p, _ := r.Context().Value(peerKey{}).(peer)
	credential, ok := parseCredential(r.Header.Get("Authorization"))
	if !p.ok || !ok {
		reply(w, http.StatusUnauthorized, rejected(CodeUnauthenticated))
		return
	}
	body, ref := readBody(w, r)
	if ref != nil {
		h.Set("Connection", "close")
		reply(w, ref.status, ref.body())
		return
	}
	// A dispatch may wait for a human approval far longer than any write
	// timeout: the deadline covers writing the answer, not waiting for it.
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	status, response := s.reg.Dispatch(r.Context(), p.uid, credential, body)
	_ = rc.SetWriteDeadline(time.Now().Add(s.cfg.WriteTimeout))
	reply(w, status, response)
}

func parseCredential(header string) ([]byte, bool) {
	enc, ok := strings.CutPrefix(header, credentialScheme)
	if !ok || len(enc) != base64.RawURLEncoding.EncodedLen(CredentialBytes) {
		return nil, false
	}
	cred, err := base64.RawURLEncoding.Strict().DecodeString(enc)
	if err != nil || len(cred) != CredentialBytes {
		return nil, false
	}
	return cred, true
}

func readBody(w http.ResponseWriter, r *http.Request) ([]byte, *refusal) {
	if r.ContentLength > MaxEnvelopeBytes {
		return nil, errTooLarge
	}
	if r.ContentLength >= 0 {
		body := make([]byte, r.ContentLength)
		if _, err := io.ReadFull(r.Body, body); err != nil {
			return nil, errMalformed
		}
		return body, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxEnvelopeBytes))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return nil, errTooLarge
	case err != nil:
		return nil, errMalformed
	}
	return body, nil
}

func reply(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
