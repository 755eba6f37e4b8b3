package handlers

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// Kinds of handler a manifest may name in handler.kind.
const (
	KindBuiltin = "builtin"
	KindExec    = "exec"
	KindHTTP    = "http"
	KindKV      = "kv"
)

// Options are the host's choices that are not part of any manifest. The
// zero value is ready to use.
type Options struct {
	// Now is the clock of builtin/clock.now and of a strict kv provider's
	// decisions and compaction; nil means time.Now.
	Now func() time.Time
	// ProviderBoundary, when set, is called at each transaction boundary
	// of a strict kv provider: "accept.start" (before BEGIN),
	// "accept.begin", "accept.reserved", "accept.applied",
	// "accept.recorded", "accept.committed", "accept.fenced" and
	// "accept.returned", and the start, begin, committed and fenced points
	// of "revoke", "query", "compact" and "setup"; "retire.begin",
	// "retire.registered", "retire.committed". The conformance suite's
	// crash and barrier campaigns stop a provider process there. nil in
	// production.
	ProviderBoundary func(point string)
	// ExecStderr, when set, receives after each exec call at most
	// MaxExecStderrBytes of the command's stderr, in one Write. It is a
	// host-side diagnostic sink: stderr never reaches the guest, a receipt
	// or an error. nil discards it (the CLI's choice).
	ExecStderr io.Writer
}

// Checker is the plan.HandlerChecker of the handlers Build makes: it runs
// every check Build runs on a manifest (kinds and builtin ids, each
// config, its fit with the capability's grant and effect, identities
// shared without conflict) and creates nothing. Seal a manifest with it
// and Build accepts the manifest, except for a resource that cannot be
// prepared when it builds (handler_setup_failed: a database that cannot
// be opened). The zero value is ready to use.
type Checker struct{}

// CheckHandlers implements plan.HandlerChecker: nil or plan.Problems.
func (Checker) CheckHandlers(m *plan.Manifest) error {
	if m == nil {
		return errors.New("handlers: no manifest")
	}
	b := newBuilder(Options{}, true)
	defer b.Close()
	b.build(m)
	if len(b.problems) > 0 {
		return b.problems
	}
	return nil
}

// Build makes one handler per distinct handler identity of m, after
// validating each capability's handler config strictly and checking it
// against the capability's grant (the handler section of its policy:
// http, kv or exec): the checks of Checker, then the resources. Problems
// are reported all at once as plan.Problems whose paths point into the
// manifest (capabilities[i].handler.config.x,
// grants[j].policy.http.allowed_hosts). The returned Closer releases what
// the handlers hold (SQLite files, idle HTTP connections); call it after
// the last run that uses them.
func Build(m *plan.Manifest, opts Options) (*broker.Handlers, io.Closer, error) {
	if m == nil {
		return nil, nil, errors.New("handlers: no manifest")
	}
	b := newBuilder(opts, false)
	hs := b.build(m)
	if len(b.problems) > 0 {
		b.Close()
		return nil, nil, b.problems
	}
	return hs, b, nil
}

func newBuilder(opts Options, checkOnly bool) *builder {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &builder{opts: opts, checkOnly: checkOnly, dbs: map[string]*sql.DB{}}
}

// build checks every capability's handler and, unless checkOnly, makes it.
func (b *builder) build(m *plan.Manifest) *broker.Handlers {
	hs := broker.NewHandlers()
	type first struct {
		index int
		grant *plan.Grant
		h     any
	}
	seen := map[plan.HandlerIdentity]first{}
	for i, c := range m.Capabilities {
		path := fmt.Sprintf("capabilities[%d].handler", i)
		id := c.Spec.Handler
		if !b.configMatches(path, c) {
			continue
		}
		g, grantPath := b.grant(path, m, c)
		if g == nil {
			// The grant's problems are recorded; the handler's identity
			// is still checked, so that one problem does not hide another.
			b.identity(path, c)
			continue
		}
		h := b.handler(path, c, g, grantPath)
		if h == nil {
			continue
		}
		if f, dup := seen[id]; dup {
			// The broker's table is keyed by identity, and a handler call
			// does not learn which capability it serves: capabilities may
			// share a handler only when nothing capability-specific differs.
			if !f.grant.SameSection(g) {
				b.problems = append(b.problems, problem(CodeHandlerConflict, path,
					fmt.Sprintf("shares its handler identity with capabilities[%d] but its grant has another %s section; give one of them another handler id", f.index, id.Kind)))
			} else if p, ok := f.h.(*kvProvider); ok {
				p.addCapability(c, g) // a provider knows the policy of every capability it serves
			}
			continue
		}
		seen[id] = first{index: i, grant: g, h: h}
		if err := hs.Add(id, h); err != nil {
			b.problems = append(b.problems, problem(CodeHandlerConflict, path, err.Error()))
		}
	}
	if len(b.problems) == 0 {
		for _, ps := range b.providers {
			if err := ps.p.setup(context.Background()); err != nil {
				b.problems = append(b.problems, problem(CodeHandlerSetup, ps.path+".config", "cannot set up the provider's store and epoch registry"))
			}
		}
	}
	return hs
}

// providerSetup is a strict kv provider to set up once every capability
// it serves is known.
type providerSetup struct {
	path string
	p    *kvProvider
}

// noGrant stands for the grant of a capability that has none (a manifest
// Build reads before, or without, sealing it): it restricts nothing, so
// only kinds that need no section can be built with it.
var noGrant = func() *plan.Grant {
	g, err := plan.NewGrant([]byte(`{}`))
	if err != nil {
		panic(err) // constant input
	}
	return g
}()

// grant reads the capability's grant and checks that its handler section
// is for the capability's handler kind, or records problems and returns
// nil. grantPath is the policy's manifest path ("" without a grant).
func (b *builder) grant(path string, m *plan.Manifest, c plan.ManifestCapability) (*plan.Grant, string) {
	g, grantPath, err := m.Grant(c.Spec.Name)
	var ps plan.Problems
	switch {
	case errors.As(err, &ps):
		b.problems = append(b.problems, ps...)
		return nil, ""
	case g == nil && c.Spec.Handler.Kind == KindHTTP:
		b.problems = append(b.problems, problem(plan.CodeCapabilityUngranted, path, "the capability has no grant; an http handler reads its allowed_hosts from it"))
		return nil, ""
	case g == nil:
		return noGrant, ""
	}
	var e *plan.Error
	if err := g.FitsHandler(c.Spec.Handler.Kind); errors.As(err, &e) {
		b.problems = append(b.problems, problem(e.Code, joinPath(grantPath, e.Path), e.Message))
		return nil, ""
	}
	return g, grantPath
}

// builder holds what Build's handlers share; it is the Closer Build returns.
type builder struct {
	opts       Options
	checkOnly  bool // Checker: check everything, create nothing
	problems   plan.Problems
	dbs        map[string]*sql.DB // one per kv file path (and epoch registry)
	providers  []providerSetup
	transports []*http.Transport
	stderr     *lockedWriter // shared by exec handlers, when Options.ExecStderr is set
}

// Close closes every SQLite database and idle HTTP connection. It is safe
// to call more than once.
func (b *builder) Close() error {
	var errs []error
	for path, db := range b.dbs {
		errs = append(errs, db.Close())
		delete(b.dbs, path)
	}
	for _, t := range b.transports {
		t.CloseIdleConnections()
	}
	b.transports = nil
	return errors.Join(errs...)
}

// configMatches checks that the config is the one the identity binds: a
// manifest built by hand could otherwise pair one identity with two configs.
func (b *builder) configMatches(path string, c plan.ManifestCapability) bool {
	raw := c.HandlerConfig
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = []byte(`{}`)
	}
	canon, err := canonjson.Canonical(raw)
	if err != nil || canonjson.PlainDigest(canon) != c.Spec.Handler.ConfigSHA256 {
		b.problems = append(b.problems, problem(CodeInvalidConfig, path+".config", "does not match the handler identity's config_sha256"))
		return false
	}
	return true
}

// handler validates one capability's handler config against its grant and
// makes its handler, or records problems and returns nil.
func (b *builder) handler(path string, c plan.ManifestCapability, g *plan.Grant, grantPath string) any {
	before := len(b.problems)
	var h any
	switch c.Spec.Handler.Kind {
	case KindBuiltin:
		h = b.builtin(path, c)
	case KindExec:
		h = b.exec(path, c, g.Exec())
	case KindHTTP:
		h = b.http(path, c, g.HTTP(), grantPath)
	case KindKV:
		h = b.kv(path, c, g)
	default:
		b.identity(path, c)
	}
	if len(b.problems) > before || !b.acceptance(path, c, h) {
		return nil
	}
	return h
}

// acceptance refuses a capability that asks for strict acceptance of a
// handler that does not declare every guarantee (acceptance_unsupported):
// today a kv handler with "acceptance": "strict" in its config, or an exec
// handler that speaks the provider protocol. Never weakened to a lesser
// mode. A handler built by Checker answers Profile from its config alone.
func (b *builder) acceptance(path string, c plan.ManifestCapability, h any) bool {
	if c.Spec.Acceptance != plan.AcceptanceStrict {
		return true
	}
	p, ok := h.(broker.Provider)
	if !ok {
		b.problems = append(b.problems, problem(broker.CodeAcceptanceUnsupported, path,
			fmt.Sprintf("the capability's acceptance is strict and a %s handler with this config is no provider (strict needs a kv handler with \"acceptance\": \"strict\" or an exec handler speaking the provider protocol)", c.Spec.Handler.Kind)))
		return false
	}
	if missing := p.Profile().Missing(); len(missing) > 0 {
		names := make([]string, len(missing))
		for i, g := range missing {
			names[i] = string(g)
		}
		b.problems = append(b.problems, problem(broker.CodeAcceptanceUnsupported, path,
			"the capability's acceptance is strict and its handler does not declare "+strings.Join(names, ", ")))
		return false
	}
	return true
}

// identity records an unknown handler kind, or an unknown builtin.
func (b *builder) identity(path string, c plan.ManifestCapability) {
	switch id := c.Spec.Handler; id.Kind {
	case KindBuiltin:
		if newBuiltin(id, b.opts) == nil {
			b.problems = append(b.problems, problem(CodeUnknownHandler, path+".id", "unknown builtin (known: echo@1, clock.now@1)"))
		}
	case KindExec, KindHTTP, KindKV:
	default:
		b.problems = append(b.problems, problem(CodeUnknownHandler, path+".kind", "unknown handler kind (known: builtin, exec, http, kv)"))
	}
}

// live refuses captured playback for kinds that have no transport evidence.
func (b *builder) live(path string, c plan.ManifestCapability) {
	if c.Spec.Playback != plan.PlaybackLive {
		b.problems = append(b.problems, problem(CodeHandlerMismatch, path+".kind",
			fmt.Sprintf("a %s handler returns no transport evidence; the capability's playback must be live", c.Spec.Handler.Kind)))
	}
}

func (b *builder) fields(path string, c plan.ManifestCapability) *plan.Fields {
	return plan.ReadFields(path+".config", CodeInvalidConfig, c.HandlerConfig, &b.problems)
}

// joinPath is the JSON path rel under base, without a stray dot when
// either is empty or rel is an index.
func joinPath(base, rel string) string {
	switch {
	case base == "":
		return rel
	case rel == "":
		return base
	case strings.HasPrefix(rel, "["):
		return base + rel
	}
	return base + "." + rel
}
