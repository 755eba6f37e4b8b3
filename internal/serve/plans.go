package serve

import (
	"crypto/sha256"
	"io"
	"slices"
	"sync"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/broker/handlers"
	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// sealedPlan is a Plan sealed from a manifest, with its handlers. Runs
// hold it (acquire/release); it is closed when it has left the cache and
// its last run has ended.
type sealedPlan struct {
	plan     *plan.Plan
	handlers *broker.Handlers
	tools    []plan.ToolSchema
	manifest [sha256.Size]byte // of the canonical manifest: the presentation is not in the identity
	closer   io.Closer

	refs    int // runs that hold it, plus one while it is cached
	evicted bool
}

// planCache keeps the last maxPlans Plans sealed, by identity: a manifest
// is sealed and its handlers built once. The latest manifest posted for
// an identity wins (two manifests differ in presentation only when their
// identities agree).
type planCache struct {
	mu      sync.Mutex
	max     int
	allowed []string // handler kinds
	byID    map[string]*sealedPlan
	order   []string // least recently used first
}

func newPlanCache(max int, allowed []string) *planCache {
	return &planCache{max: max, allowed: allowed, byID: map[string]*sealedPlan{}}
}

// seal parses and seals a manifest, or returns the cached Plan of the same
// manifest, held for the caller (release it).
func (c *planCache) seal(manifest []byte) (*sealedPlan, error) {
	canon, err := canonjson.Canonical(manifest)
	if err != nil {
		return nil, refusal(plan.CodeInvalidManifest, "the manifest is not strict JSON")
	}
	m, err := plan.ParseManifest(manifest)
	if err != nil {
		return nil, planRefusal(err)
	}
	for _, mc := range m.Capabilities {
		if !slices.Contains(c.allowed, mc.Spec.Handler.Kind) {
			return nil, refusal(CodeHandlerNotAllowed, "this server serves handler kinds %v only (apysup serve --allow-handlers)", c.allowed)
		}
	}
	p, err := m.Seal(handlers.Checker{})
	if err != nil {
		return nil, planRefusal(err)
	}
	sum := sha256.Sum256(canon)
	if sp := c.get(p.Identity()); sp != nil {
		if sp.manifest == sum {
			return sp, nil
		}
		c.release(sp)
	}
	hs, closer, err := handlers.Build(m, handlers.Options{})
	if err != nil {
		return nil, planRefusal(err)
	}
	sp := &sealedPlan{plan: p, handlers: hs, tools: p.ToolSchemas(), manifest: sum, closer: closer, refs: 2}
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.byID[p.Identity()]; old != nil {
		c.evictLocked(p.Identity())
	}
	c.byID[p.Identity()] = sp
	c.order = append(c.order, p.Identity())
	for len(c.order) > c.max {
		c.evictLocked(c.order[0])
	}
	return sp, nil
}

// get returns the cached Plan of that identity, held, or nil.
func (c *planCache) get(id string) *sealedPlan {
	c.mu.Lock()
	defer c.mu.Unlock()
	sp := c.byID[id]
	if sp == nil {
		return nil
	}
	sp.refs++
	c.order = append(slices.DeleteFunc(c.order, func(s string) bool { return s == id }), id)
	return sp
}

func (c *planCache) release(sp *sealedPlan) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.releaseLocked(sp)
}

func (c *planCache) releaseLocked(sp *sealedPlan) {
	if sp.refs--; sp.refs == 0 {
		_ = sp.closer.Close()
	}
}

func (c *planCache) evictLocked(id string) {
	sp := c.byID[id]
	delete(c.byID, id)
	c.order = slices.DeleteFunc(c.order, func(s string) bool { return s == id })
	if sp != nil && !sp.evicted {
		sp.evicted = true
		c.releaseLocked(sp)
	}
}

// close drops every cached Plan (runs still holding one close it).
func (c *planCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.byID {
		c.evictLocked(id)
	}
}

// planRefusal is a refused manifest with the plan package's code.
func planRefusal(err error) *Error {
	code := plan.CodeOf(err)
	if code == "" {
		code = plan.CodeInvalidManifest
	}
	return refusal(code, "%v", err)
}
