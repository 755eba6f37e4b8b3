package broker

// Marker kinds delivered to observers.
const (
	MarkerIntent    = "intent"    // admitted, before approval
	MarkerStarted   = "started"   // the handler is about to run
	MarkerCompleted = "completed" // the receipt is written
)

// Marker is a body-free lifecycle event: no arguments, results or grants.
type Marker struct {
	Kind       string `json:"kind"`
	RunID      string `json:"run_id"`
	CallID     string `json:"call_id"`
	Capability string `json:"capability"`
	Outcome    string `json:"outcome,omitempty"`
}

// Observer watches calls passively. Its error or panic changes nothing.
type Observer interface {
	Observe(Marker) error
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(Marker) error

func (f ObserverFunc) Observe(m Marker) error { return f(m) }

func (b *Broker) observe(m Marker) {
	m.RunID = b.cfg.RunID
	for _, o := range b.cfg.Observers {
		func() {
			defer func() { _ = recover() }()
			_ = o.Observe(m)
		}()
	}
}
