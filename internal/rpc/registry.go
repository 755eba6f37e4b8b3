package rpc

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/callctx"
	"github.com/apysup/apysup/internal/canonjson"
)

// CredentialBytes is the size of a channel credential.
const CredentialBytes = 32

// Errors of Open, Revoke and Close.
var (
	ErrInvalidChannel = errors.New("rpc: invalid channel configuration")
	ErrChannelExists  = errors.New("rpc: channel id already open")
	ErrUnknownChannel = errors.New("rpc: unknown channel")
)

// ChannelConfig is what the host binds one run's channel to.
type ChannelConfig struct {
	ChannelID    string
	InvocationID string
	ExecutionID  string // the Broker's run id
	PlanSHA256   string // the run's Plan identity, "sha256:<hex>"
	Expiry       time.Time
	PeerUID      uint32 // the guest's host uid, checked with SO_PEERCRED
	Dispatcher   broker.Dispatcher
	Limits       ChannelLimits
}

// ChannelLimits bound one channel. Zero values mean the defaults.
type ChannelLimits struct {
	MaxCalls       int   // distinct call ids remembered (default 1024)
	MaxCachedBytes int64 // bytes of cached responses before new ids are refused (default 64 MiB)
	MaxConcurrent  int   // requests handled at once (default 16)
}

// DefaultChannelLimits returns the built-in limits.
func DefaultChannelLimits() ChannelLimits {
	return ChannelLimits{MaxCalls: 1024, MaxCachedBytes: 64 << 20, MaxConcurrent: 16}
}

func (l ChannelLimits) withDefaults() ChannelLimits {
	d := DefaultChannelLimits()
	return ChannelLimits{
		MaxCalls:       positiveOr(l.MaxCalls, d.MaxCalls),
		MaxCachedBytes: positiveOr(l.MaxCachedBytes, d.MaxCachedBytes),
		MaxConcurrent:  positiveOr(l.MaxConcurrent, d.MaxConcurrent),
	}
}

// positiveOr returns v when it is set (positive), else def.
func positiveOr[T int | int64 | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}

// RegistryConfig configures a Registry.
type RegistryConfig struct {
	// Now is the clock used for expiry; nil means time.Now.
	Now func() time.Time
}

// Registry holds the open channels of this host.
type Registry struct {
	now      func() time.Time
	mu       sync.Mutex
	channels map[string]*Channel
}

// NewRegistry returns an empty Registry.
func NewRegistry(cfg RegistryConfig) *Registry {
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Registry{now: now, channels: make(map[string]*Channel)}
}

// Channel is one open channel. Its configuration never changes; revocation
// and the call table are its only state.
type Channel struct {
	cfg        ChannelConfig
	limits     ChannelLimits
	credential [CredentialBytes]byte
	slots      chan struct{}
	ctx        context.Context // cancelled by Revoke and Close
	cancel     context.CancelFunc

	mu       sync.Mutex
	revoked  bool
	closed   bool
	calls    callTable
	inflight sync.WaitGroup // dispatches still running
}

// ID returns the channel id.
func (c *Channel) ID() string { return c.cfg.ChannelID }

// String and GoString name the channel only: its credential never appears
// in a log, whatever verb prints it.
func (c *Channel) String() string   { return "rpc.Channel(" + c.cfg.ChannelID + ")" }
func (c *Channel) GoString() string { return c.String() }

// Config returns the channel's configuration (with its limits resolved).
func (c *Channel) Config() ChannelConfig {
	cfg := c.cfg
	cfg.Limits = c.limits
	return cfg
}

// Open registers a channel and returns it with its credential, which is
// never stored anywhere else and never appears in an error.
func (r *Registry) Open(cfg ChannelConfig) (*Channel, []byte, error) {
	if err := validateChannel(cfg, r.now()); err != nil {
		return nil, nil, err
	}
	ch := &Channel{cfg: cfg, limits: cfg.Limits.withDefaults()}
	if _, err := rand.Read(ch.credential[:]); err != nil {
		return nil, nil, fmt.Errorf("rpc: credential: %w", err)
	}
	ch.slots = make(chan struct{}, ch.limits.MaxConcurrent)
	ch.ctx, ch.cancel = context.WithCancel(context.Background())
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.channels[cfg.ChannelID]; ok {
		ch.cancel()
		return nil, nil, ErrChannelExists
	}
	r.channels[cfg.ChannelID] = ch
	return ch, bytes.Clone(ch.credential[:]), nil
}

func validateChannel(cfg ChannelConfig, now time.Time) error {
	for name, v := range map[string]string{
		"channel id": cfg.ChannelID, "invocation id": cfg.InvocationID, "execution id": cfg.ExecutionID,
	} {
		if v == "" || len(v) > maxIDBytes {
			return fmt.Errorf("%w: %s must be 1..%d bytes", ErrInvalidChannel, name, maxIDBytes)
		}
	}
	switch {
	case !canonjson.IsDigest(cfg.PlanSHA256):
		return fmt.Errorf("%w: plan digest is not sha256:<hex>", ErrInvalidChannel)
	case !cfg.Expiry.After(now):
		return fmt.Errorf("%w: expiry is not in the future", ErrInvalidChannel)
	case cfg.Dispatcher == nil:
		return fmt.Errorf("%w: no dispatcher", ErrInvalidChannel)
	}
	return nil
}

// Revoke makes every later request on the channel fail authentication and
// cancels the context of dispatches still running. The call table stays
// until Close.
func (r *Registry) Revoke(id string) error {
	ch := r.lookup(id)
	if ch == nil {
		return ErrUnknownChannel
	}
	ch.mu.Lock()
	ch.revoked = true
	ch.mu.Unlock()
	ch.cancel()
	return nil
}

// Close removes the channel, cancels running dispatches and waits for them
// to return, so nothing of the channel outlives the call.
func (r *Registry) Close(id string) error {
	r.mu.Lock()
	ch := r.channels[id]
	delete(r.channels, id)
	r.mu.Unlock()
	if ch == nil {
		return ErrUnknownChannel
	}
	ch.mu.Lock()
	ch.closed = true
	ch.mu.Unlock()
	ch.cancel()
	ch.inflight.Wait()
	return nil
}

func (r *Registry) lookup(id string) *Channel {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.channels[id]
}

// absentCredential stands in for an unknown channel's credential so that an
// unknown channel id costs the same comparison as a known one.
var absentCredential [CredentialBytes]byte

// Dispatch handles one request: the envelope bytes, the credential from the
// Authorization header and the peer's uid from SO_PEERCRED. It returns the
// HTTP status and the response body. ctx carries values only: a dispatch,
// once started, is bound to the channel's lifetime, not to the request's,
// so a dropped connection never cuts a handler off half-way.
func (r *Registry) Dispatch(ctx context.Context, peerUID uint32, credential, body []byte) (int, []byte) {
	env, ref := parseEnvelope(body)
	if ref != nil {
		return ref.status, ref.body()
	}
	ch := r.lookup(env.ChannelID)
	if !r.authentic(ch, env, peerUID, credential) {
		return http.StatusUnauthorized, rejected(CodeUnauthenticated)
	}
	select {
	case ch.slots <- struct{}{}:
		defer func() { <-ch.slots }()
	default:
		return http.StatusTooManyRequests, rejected(CodeTooManyConcurrent)
	}

	sum := sha256.Sum256(env.Frame)
	adm, entry := ch.admit(env, sum, false)
	if adm == admitCompare {
		if !sameRequest(entry.frame, env.Frame) {
			return http.StatusConflict, rejected(CodeCallIdentityMismatch)
		}
		adm, entry = ch.admit(env, sum, true)
	}
	switch adm {
	case admitRevoked:
		return http.StatusUnauthorized, rejected(CodeUnauthenticated)
	case admitInFlight:
		return http.StatusOK, ambiguous(CodeCallInFlight)
	case admitReplay:
		return http.StatusOK, Completed(entry.response, true)
	case admitFull:
		return http.StatusTooManyRequests, rejected(CodeCallTableFull)
	}

	defer ch.inflight.Done()
	resp := ch.invoke(ctx, env.Frame)
	if resp == nil {
		return http.StatusOK, ambiguous(CodeDispatchUnknown)
	}
	response := resp.AppendJSON(nil)
	ch.mu.Lock()
	if resp.Status == broker.StatusRefused { // refused at admission: no receipt, the id is not spent
		ch.calls.forget(env.CallID)
	} else {
		ch.calls.complete(env.CallID, response)
	}
	ch.mu.Unlock()
	return http.StatusOK, Completed(response, false)
}

// admit consults the call table under the channel's lock; a new call id
// counts as in flight until its dispatch returns.
func (c *Channel) admit(env *envelope, sum [sha256.Size]byte, known bool) (admission, *callEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.revoked || c.closed {
		return admitRevoked, nil
	}
	adm, entry := c.calls.begin(env.CallID, env.Frame, sum, known, c.limits)
	if adm == admitDispatch {
		c.inflight.Add(1)
	}
	return adm, entry
}

// authentic checks everything a request must match, evaluating every part
// whatever the earlier ones gave, so the time taken says nothing about which
// part was wrong.
func (r *Registry) authentic(ch *Channel, env *envelope, peerUID uint32, credential []byte) bool {
	want := absentCredential[:]
	var cfg ChannelConfig
	if ch != nil {
		want = ch.credential[:]
		cfg = ch.cfg
	}
	ok := subtle.ConstantTimeCompare(credential, want)
	ok &= equalString(env.InvocationID, cfg.InvocationID)
	ok &= equalString(env.ExecutionID, cfg.ExecutionID)
	ok &= equalString(env.PlanSHA256, cfg.PlanSHA256)
	ok &= subtle.ConstantTimeEq(int32(peerUID^cfg.PeerUID), 0)
	live := 0
	if ch != nil && r.now().Before(cfg.Expiry) {
		ch.mu.Lock()
		if !ch.revoked && !ch.closed {
			live = 1
		}
		ch.mu.Unlock()
	}
	return ok&live == 1
}

func equalString(a, b string) int {
	return subtle.ConstantTimeCompare([]byte(a), []byte(b))
}

// invoke calls the Dispatcher once. A panic or a nil response is an
// unknown outcome (nil). The call's context ends when its caller gives it
// up (the bridge closes the connection: net/http cancels the request's
// context) or when the channel closes with its run; it names the run's, so
// that a handler the Broker has dispatched runs on after a give-up
// (internal/callctx).
func (c *Channel) invoke(ctx context.Context, frame []byte) (response *broker.Response) {
	dctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel)
	defer stop()
	defer func() {
		if recover() != nil {
			response = nil
		}
	}()
	return c.cfg.Dispatcher.Call(callctx.WithRun(dctx, c.ctx), frame)
}

// Responder answers each call frame with d's response in its Completed
// envelope, nil when d has none: the wazero backend's host calls
// (wazero.Dispatcher). A nil d gives a nil Responder: no channel.
func Responder(d broker.Dispatcher) func(ctx context.Context, frame []byte) []byte {
	if d == nil {
		return nil
	}
	return func(ctx context.Context, frame []byte) []byte {
		response := d.Call(ctx, frame)
		if response == nil {
			return nil
		}
		return Completed(response.AppendJSON(nil), false)
	}
}
