package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/apysup/apysup/broker"
	"github.com/apysup/apysup/plan"
)

// builtin makes one of the handlers compiled into apysup. None takes any
// config; the version is the builtin's own ("1").
func (b *builder) builtin(path string, c plan.ManifestCapability) any {
	b.live(path, c)
	if f := b.fields(path, c); f != nil {
		f.Done()
	}
	h := newBuiltin(c.Spec.Handler, b.opts)
	if h == nil {
		b.identity(path, c)
	}
	return h
}

// newBuiltin is the builtin with this id and version, or nil.
func newBuiltin(id plan.HandlerIdentity, opts Options) broker.Handler {
	switch {
	case id.ID == "echo" && id.Version == "1":
		return broker.Echo{}
	case id.ID == "clock.now" && id.Version == "1":
		return clockNow{now: opts.Now}
	}
	return nil
}

// clockNow returns {"unix_ms": <milliseconds since the Unix epoch>}. It is
// nondeterministic by nature: two runs of one script see different values,
// so parity tests must normalise it.
type clockNow struct{ now func() time.Time }

func (c clockNow) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(err)
	}
	if !bytes.Equal(bytes.TrimSpace(args), []byte(`{}`)) {
		return nil, fail(CodeBadArguments)
	}
	return json.RawMessage(`{"unix_ms":` + strconv.FormatInt(c.now().UnixMilli(), 10) + `}`), nil
}
