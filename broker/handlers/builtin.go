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
	switch id := c.Spec.Handler; {
	case id.ID == "echo" && id.Version == "1":
		return broker.Echo{}
	case id.ID == "clock.now" && id.Version == "1":
		return clockNow{now: b.opts.Now}
	default:
		b.problems = append(b.problems, problem(CodeUnknownHandler, path+".id", "unknown builtin (known: echo@1, clock.now@1)"))
		return nil
	}
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
