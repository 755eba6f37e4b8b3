package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/apysup/apysup/broker"
)

func kvCapability(name, file, op, namespace string) capability {
	effect := "read"
	if op == KVPut {
		effect = "write"
	}
	ns := ""
	if namespace != "" {
		ns = `,"namespace":"` + namespace + `"`
	}
	return capability{name: name, kind: "kv", id: op + "-" + namespace, effect: effect,
		config: `{"path":"` + file + `","op":"` + op + `"` + ns + `}`}
}

// kvStore is the three operations on one namespace of one file.
type kvStore struct{ get, put, list broker.Handler }

func kvStoreOf(t *testing.T, file, namespace string) kvStore {
	t.Helper()
	return kvStore{
		get:  handlerOf(t, Options{}, kvCapability("kv.get", file, KVGet, namespace)).(broker.Handler),
		put:  handlerOf(t, Options{}, kvCapability("kv.put", file, KVPut, namespace)).(broker.Handler),
		list: handlerOf(t, Options{}, kvCapability("kv.list", file, KVList, namespace)).(broker.Handler),
	}
}

func mustCall(t *testing.T, h broker.Handler, args string) string {
	t.Helper()
	out, err := h.Call(context.Background(), json.RawMessage(args))
	if err != nil {
		t.Fatalf("%s: %v", args, err)
	}
	return string(out)
}

func TestKV(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	s := kvStoreOf(t, file, "notes")
	other := kvStoreOf(t, file, "other")
	steps := []struct {
		h          broker.Handler
		args, want string
	}{
		{s.get, `{"key":"a"}`, `{"found":false,"key":"a"}`},
		{s.put, `{"key":"a","value":{"b":1,"a":[1.0,"x"]}}`, `{"key":"a","stored":true}`},
		{s.get, `{"key":"a"}`, `{"found":true,"key":"a","value":{"a":[1,"x"],"b":1}}`},
		{s.put, `{"key":"a","value":"replaced"}`, `{"key":"a","stored":true}`},
		{s.get, `{"key":"a"}`, `{"found":true,"key":"a","value":"replaced"}`},
		{s.put, `{"key":"n","value":null}`, `{"key":"n","stored":true}`},
		{s.get, `{"key":"n"}`, `{"found":true,"key":"n","value":null}`},
		{other.get, `{"key":"a"}`, `{"found":false,"key":"a"}`}, // namespaces do not see each other
		{other.list, `{}`, `{"keys":[],"truncated":false}`},
		{s.put, `{"key":"day/2","value":2}`, `{"key":"day/2","stored":true}`},
		{s.put, `{"key":"day/10","value":10}`, `{"key":"day/10","stored":true}`},
		{s.put, `{"key":"day","value":0}`, `{"key":"day","stored":true}`},
		{s.put, `{"key":"dax","value":0}`, `{"key":"dax","stored":true}`},
		{s.put, `{"key":"dé","value":0}`, `{"key":"dé","stored":true}`},
		{s.list, `{}`, `{"keys":["a","dax","day","day/10","day/2","dé","n"],"truncated":false}`},
		{s.list, `{"prefix":"day/"}`, `{"keys":["day/10","day/2"],"truncated":false}`},
		{s.list, `{"prefix":"day"}`, `{"keys":["day","day/10","day/2"],"truncated":false}`},
		{s.list, `{"prefix":"d","limit":2}`, `{"keys":["dax","day"],"truncated":true}`},
		{s.list, `{"prefix":"d","limit":5}`, `{"keys":["dax","day","day/10","day/2","dé"],"truncated":false}`},
		{s.list, `{"prefix":"zzz"}`, `{"keys":[],"truncated":false}`},
	}
	for _, st := range steps {
		if got := mustCall(t, st.h, st.args); got != st.want {
			t.Fatalf("%s: got %s, want %s", st.args, got, st.want)
		}
	}
}

func TestKVFailures(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	s := kvStoreOf(t, file, "")
	big := `"` + strings.Repeat("v", MaxKVValueBytes-1) + `"` // one byte over, quotes included
	tests := []struct {
		name string
		h    broker.Handler
		args string
		code string
	}{
		{"get without key", s.get, `{}`, CodeBadArguments},
		{"get unknown field", s.get, `{"key":"a","default":1}`, CodeBadArguments},
		{"get key not a string", s.get, `{"key":1}`, CodeBadArguments},
		{"get empty key", s.get, `{"key":""}`, CodeKVBadKey},
		{"get key too long", s.get, `{"key":"` + strings.Repeat("k", MaxKVKeyBytes+1) + `"}`, CodeKVBadKey},
		{"get control character", s.get, `{"key":"a\nb"}`, CodeKVBadKey},
		{"put without value", s.put, `{"key":"a"}`, CodeBadArguments},
		{"put without key", s.put, `{"value":1}`, CodeBadArguments},
		{"put unknown field", s.put, `{"key":"a","value":1,"ttl":5}`, CodeBadArguments},
		{"put duplicate keys", s.put, `{"key":"a","value":{"x":1,"x":2}}`, CodeBadArguments},
		{"put value too large", s.put, `{"key":"a","value":` + big + `}`, CodeKVValueTooLarge},
		{"put key NUL", s.put, `{"key":"a\u0000","value":1}`, CodeKVBadKey},
		{"list limit zero", s.list, `{"limit":0}`, CodeBadArguments},
		{"list limit over", s.list, `{"limit":101}`, CodeBadArguments},
		{"list limit fraction", s.list, `{"limit":1.5}`, CodeBadArguments},
		{"list prefix too long", s.list, `{"prefix":"` + strings.Repeat("p", MaxKVKeyBytes+1) + `"}`, CodeKVBadKey},
		{"list unknown field", s.list, `{"after":"a"}`, CodeBadArguments},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := tc.h.Call(context.Background(), json.RawMessage(tc.args))
			if CodeOf(err) != tc.code || out != nil {
				t.Fatalf("got %s %v, want %s", out, err, tc.code)
			}
		})
	}
	// The largest value that fits is stored.
	fits := `"` + strings.Repeat("v", MaxKVValueBytes-2) + `"`
	mustCall(t, s.put, `{"key":"a","value":`+fits+`}`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.get.Call(ctx, json.RawMessage(`{"key":"a"}`)); CodeOf(err) != CodeCancelled {
		t.Fatalf("cancelled: %v", err)
	}
}

// TestKVEmptyFile: an empty file (as from touch) becomes a database; a
// file with anything else in it is refused (see TestBuildProblems).
func TestKVEmptyFile(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	s := kvStoreOf(t, file, "")
	mustCall(t, s.put, `{"key":"a","value":1}`)
	if got := mustCall(t, s.get, `{"key":"a"}`); got != `{"found":true,"key":"a","value":1}` {
		t.Fatal(got)
	}
}

func TestKVListBound(t *testing.T) {
	s := kvStoreOf(t, filepath.Join(t.TempDir(), "kv.db"), "")
	for i := range MaxKVList + 5 {
		mustCall(t, s.put, fmt.Sprintf(`{"key":"k%03d","value":%d}`, i, i))
	}
	var got struct {
		Keys      []string `json:"keys"`
		Truncated bool     `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(mustCall(t, s.list, `{"prefix":"k"}`)), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Keys) != MaxKVList || !got.Truncated || got.Keys[0] != "k000" || got.Keys[MaxKVList-1] != "k099" {
		t.Fatalf("got %d keys, truncated %v", len(got.Keys), got.Truncated)
	}
}

// TestKVSharedAndClosed: handlers of one file share one *sql.DB in WAL
// mode; the Closer closes it; the data outlives it.
func TestKVSharedAndClosed(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	m := manifestOf(t, kvCapability("kv.get", file, KVGet, "a"), kvCapability("kv.put", file, KVPut, "a"),
		kvCapability("kv.list", file, KVList, "b"))
	b := &builder{dbs: map[string]*sql.DB{}}
	var hs []*kvHandler
	for i, c := range m.Capabilities {
		h := b.handler(fmt.Sprintf("capabilities[%d].handler", i), c, noGrant, "")
		hs = append(hs, h.(*kvHandler))
	}
	if len(b.dbs) != 1 || hs[0].db != hs[1].db || hs[1].db != hs[2].db {
		t.Fatalf("%d databases for one file", len(b.dbs))
	}
	mustCall(t, hs[1], `{"key":"x","value":1}`)
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := hs[0].Call(context.Background(), json.RawMessage(`{"key":"x"}`)); CodeOf(err) != CodeKVFailed {
		t.Fatalf("after Close: %v", err)
	}

	db, err := sql.Open("sqlite", file)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode, value string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal mode %q %v", mode, err)
	}
	if err := db.QueryRow(`SELECT value FROM apysup_kv WHERE namespace = 'a' AND key = 'x'`).Scan(&value); err != nil || value != "1" {
		t.Fatalf("stored %q %v", value, err)
	}
}

// TestKVConcurrentWriters: two Builds of one file (as two apysup processes
// would have) write and read concurrently; the busy timeout serialises them.
func TestKVConcurrentWriters(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	stores := []kvStore{kvStoreOf(t, file, "n"), kvStoreOf(t, file, "n")}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := stores[w%2]
			for i := range 10 {
				key := fmt.Sprintf(`w%d-%d`, w, i)
				if _, err := s.put.Call(context.Background(), json.RawMessage(`{"key":"`+key+`","value":`+fmt.Sprint(i)+`}`)); err != nil {
					t.Errorf("put %s: %v", key, err)
					return
				}
				out, err := stores[(w+1)%2].get.Call(context.Background(), json.RawMessage(`{"key":"`+key+`"}`))
				if err != nil || string(out) != `{"found":true,"key":"`+key+`","value":`+fmt.Sprint(i)+`}` {
					t.Errorf("get %s: %s %v", key, out, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var got struct{ Keys []string }
	json.Unmarshal([]byte(mustCall(t, stores[0].list, `{"prefix":"w"}`)), &got)
	if len(got.Keys) != 80 {
		t.Fatalf("%d keys", len(got.Keys))
	}
}

// TestKVThroughBroker: put is a write capability end to end; the broker
// validates and canonicalises what the store returns.
func TestKVThroughBroker(t *testing.T) {
	file := filepath.Join(t.TempDir(), "kv.db")
	b := runBroker(t, Options{}, kvCapability("notes.put", file, KVPut, "notes"), kvCapability("notes.get", file, KVGet, "notes"))
	if r := brokerCall(t, b, 1, "notes.put", `{"key":"summary","value":{"text":"two records"}}`); r.Status != "ok" {
		t.Fatalf("put: %+v", r)
	}
	r := brokerCall(t, b, 2, "notes.get", `{"key":"summary"}`)
	if r.Status != "ok" || string(r.Result) != `{"found":true,"key":"summary","value":{"text":"two records"}}` {
		t.Fatalf("get: %+v %s", r, r.Result)
	}
	if r := brokerCall(t, b, 3, "notes.get", `{"key":""}`); r.Status != "error" || r.ErrorCode != "handler_error" {
		t.Fatalf("bad key: %+v", r)
	}
}
