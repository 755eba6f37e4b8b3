package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/apysup/apysup/internal/rpc"
	"github.com/apysup/apysup/internal/sandbox"
	"github.com/apysup/apysup/internal/sandbox/supervisor"
	"github.com/apysup/apysup/plan"
)

// barrier is the host side of peers.meet: each of n guests calls it once
// per phase; every call returns when all n have arrived, with what the
// others sent and their host pids.
type barrier struct {
	n      int
	tokens []string
	mu     sync.Mutex
	phases map[int]*phase
}

type phase struct {
	arrived  map[int]json.RawMessage // index -> channel
	complete chan struct{}
	pids     map[int][]int
	shapes   map[int]error // index -> what is wrong with its pids, if anything
}

func (b *barrier) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var a struct {
		Index, Phase int
		Channel      json.RawMessage
	}
	if err := json.Unmarshal(args, &a); err != nil || a.Index < 0 || a.Index >= b.n {
		return nil, fmt.Errorf("bad arguments %s", args)
	}
	b.mu.Lock()
	ph := b.phases[a.Phase]
	if ph == nil {
		ph = &phase{arrived: map[int]json.RawMessage{}, complete: make(chan struct{})}
		b.phases[a.Phase] = ph
	}
	ph.arrived[a.Index] = a.Channel
	if len(ph.arrived) == b.n {
		// Everyone is alive and waiting here: find their host pids now.
		ph.pids, ph.shapes = map[int][]int{}, map[int]error{}
		for i, tok := range b.tokens {
			ph.pids[i] = guestHostPids(tok)
			ph.shapes[i] = initAndScript(ph.pids[i])
		}
		close(ph.complete)
	}
	b.mu.Unlock()
	select {
	case <-ph.complete:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-time.After(2 * time.Minute):
		b.mu.Lock()
		defer b.mu.Unlock()
		return nil, fmt.Errorf("phase %d: only %d of %d runs arrived", a.Phase, len(ph.arrived), b.n)
	}
	type peer struct {
		Index    int             `json:"index"`
		HostPids []int           `json:"host_pids"`
		Channel  json.RawMessage `json:"channel"`
	}
	out := struct {
		Peers []peer `json:"peers"`
	}{Peers: []peer{}}
	for i := 0; i < b.n; i++ {
		if i != a.Index {
			out.Peers = append(out.Peers, peer{Index: i, HostPids: ph.pids[i], Channel: ph.arrived[i]})
		}
	}
	return json.Marshal(out)
}

// TestConcurrentRunsAreIsolated runs 8 guests at once. While all are
// alive (a barrier on the host), each learns the others' host pids (two
// per run: its init and its script) and channel credentials. Each must
// have its own host uid and its own /tmp, must fail to signal any process
// of any other, and must be refused when it presents another run's valid
// credentials on its own socket (the channel checks the peer's uid,
// SO_PEERCRED, not only the secret).
func TestConcurrentRunsAreIsolated(t *testing.T) {
	t.Parallel()
	sup := need(t)
	const n = 8
	id, err := plan.NewHandlerIdentity("test", "peers", "1", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := &barrier{n: n, phases: map[int]*phase{}}
	for i := 0; i < n; i++ {
		b.tokens = append(b.tokens, fmt.Sprintf("concurrent-%s-%d", randomHex(t, 6), i))
	}
	p, hs := onePlan(t, "peers", "meet", id, b)
	script := guestScript(t, "concurrent.py")
	results := make([]*supervisor.Result, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		req := completeRequest(t, supervisor.Request{Plan: p, Handlers: hs, ScriptPath: script,
			Args: []string{fmt.Sprint(i), b.tokens[i]}, Limits: sandbox.Limits{Timeout: 3 * time.Minute}})
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = tryRun(context.Background(), sup, req)
		}()
	}
	wg.Wait()
	uids := map[int]int{}
	for i, res := range results {
		if errs[i] != nil {
			t.Fatalf("run %d: %v", i, errs[i])
		}
		if res.Status != sandbox.StatusOK {
			t.Errorf("run %d: %s", i, summary(res))
			continue
		}
		m := parseMarkers(t, res)
		want := map[string]string{}
		for j := 0; j < n; j++ {
			if j != i {
				want[fmt.Sprintf("kill:peer%d", j)] = "ESRCH"
				want[fmt.Sprintf("steal:peer%d", j)] = "401:" + rpc.CodeUnauthenticated
			}
		}
		m.expect(t, want, "survived")
		var uid int
		var tmp []string
		m.infoAs(t, "host_uid", &uid)
		m.infoAs(t, "tmp", &tmp)
		if other, dup := uids[uid]; dup {
			t.Errorf("runs %d and %d share host uid %d", other, i, uid)
		}
		uids[uid] = i
		if !slices.Equal(tmp, []string{fmt.Sprintf("mine-%d", i)}) {
			t.Errorf("run %d sees /tmp %v", i, tmp)
		}
		// meet twice: two ok receipts; the stolen credentials reached no Broker.
		if len(res.Receipts) != 2 {
			t.Errorf("run %d: %d receipts", i, len(res.Receipts))
		}
	}
	// Every barrier found both host pids of every guest (so no kill:peer
	// marker above stands for an empty attempt).
	for _, ph := range b.phases {
		for i := 0; i < n; i++ {
			if ph.shapes[i] != nil {
				t.Errorf("run %d: host pids %v at the barrier: %v", i, ph.pids[i], ph.shapes[i])
			}
		}
	}
}

// initAndScript checks that pids are the two processes of a waiting
// guest: the guest init (pid 1 of its namespace, a child of this process)
// and the script (its child).
func initAndScript(pids []int) error {
	if len(pids) != 2 {
		return fmt.Errorf("want 2 (the guest init and the script), got %d", len(pids))
	}
	procs := processes()
	for _, pid1 := range pids {
		script := pids[0] + pids[1] - pid1
		if procs[pid1].ppid == os.Getpid() && procs[script].ppid == pid1 {
			return nil
		}
	}
	return fmt.Errorf("not the guest init and its child: %v %v", procs[pids[0]], procs[pids[1]])
}
