package handlers

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver (pure Go, no cgo)

	"github.com/apysup/apysup/internal/canonjson"
	"github.com/apysup/apysup/plan"
)

// Bounds of kv handlers.
const (
	MaxKVKeyBytes   = 256
	MaxKVValueBytes = 256 << 10 // canonical JSON
	MaxKVList       = 100
	// kvBusyTimeoutMS is how long a connection waits for another writer of
	// the same file (another handler, another apysup process) before failing.
	kvBusyTimeoutMS = "5000"
)

// Operations of a kv handler; each handler does exactly one.
const (
	KVGet  = "get"
	KVPut  = "put"
	KVList = "list"
)

const kvSchema = `CREATE TABLE IF NOT EXISTS apysup_kv (
	namespace TEXT NOT NULL,
	key       TEXT NOT NULL,
	value     TEXT NOT NULL,
	PRIMARY KEY (namespace, key)
) WITHOUT ROWID`

// kvHandler is one operation on one namespace of one SQLite file, on the
// keys its grant allows.
type kvHandler struct {
	db        *sql.DB
	op        string
	namespace string
	keyPrefix string // from the grant: every key the handler touches starts with it
}

func (b *builder) kv(path string, c plan.ManifestCapability, grant *plan.Grant) any {
	g := grant.KV()
	b.live(path, c)
	f := b.fields(path, c)
	if f == nil {
		return nil
	}
	h := &kvHandler{}
	file := f.Str("path", true)
	if f.Has("path") {
		if st, err := os.Stat(filepath.Dir(file)); !filepath.IsAbs(file) || filepath.Clean(file) != file ||
			strings.ContainsAny(file, "?#\x00") || err != nil || !st.IsDir() {
			f.Problem("path", "must be an absolute, clean file path (no ? or #) in an existing directory")
		}
	}
	h.op = f.Str("op", true)
	if f.Has("op") && h.op != KVGet && h.op != KVPut && h.op != KVList {
		f.Problem("op", "must be get, put or list")
	}
	if f.Has("namespace") {
		h.namespace = f.Str("namespace", false)
		if !plan.KVNamespacePattern.MatchString(h.namespace) {
			f.Problem("namespace", "must match "+plan.KVNamespacePattern.String())
		}
	}
	strict := readKVStrict(f, file)
	f.Done()
	if strict != nil && c.Spec.Acceptance == "" {
		b.problems = append(b.problems, problem(CodeHandlerMismatch, path+".config.acceptance",
			"a strict kv handler commits only through provider acceptance; the capability's acceptance must not be off"))
	}
	if h.op == KVPut && c.Spec.Effect != plan.EffectWrite {
		b.problems = append(b.problems, problem(CodeHandlerMismatch, path+".config.op",
			"put changes the store; the capability's effect must be write"))
	}
	if g != nil {
		if g.Namespace != "" && h.namespace != g.Namespace {
			b.problems = append(b.problems, problem(CodeNotGranted, path+".config.namespace", "is not the namespace the grant allows"))
		}
		if g.ReadOnly && h.op == KVPut {
			b.problems = append(b.problems, problem(CodeNotGranted, path+".config.op", "put changes the store, and the grant is read_only"))
		}
		h.keyPrefix = g.KeyPrefix
	}
	if len(b.problems) > 0 {
		return nil // do not create a database file for a config that fails
	}
	if b.checkOnly {
		if strict != nil {
			return b.kvProvider(path, c, grant, h, strict)
		}
		return h
	}
	db, err := b.openKV(file)
	if err != nil {
		b.problems = append(b.problems, problem(CodeHandlerSetup, path+".config.path", "cannot open the SQLite database"))
		return nil
	}
	h.db = db
	if strict != nil {
		return b.kvProvider(path, c, grant, h, strict)
	}
	return h
}

// openKV opens (once per path) a database in WAL mode with a busy timeout;
// every handler of that file shares the *sql.DB.
func (b *builder) openKV(file string) (*sql.DB, error) { return b.openSQLite(file, kvSchema) }

// openSQLite opens (once per path) a database with schema.
func (b *builder) openSQLite(file, schema string) (*sql.DB, error) {
	if db, ok := b.dbs[file]; ok {
		return db, nil
	}
	if err := sqliteOrAbsent(file); err != nil {
		return nil, err
	}
	dsn := file + "?_busy_timeout=" + kvBusyTimeoutMS + "&_journal_mode=WAL&_synchronous=NORMAL&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		db.Close()
		return nil, errors.New("handlers: kv: not in WAL mode")
	}
	if _, err := db.Exec(schema); err != nil {
		db.Close()
		return nil, err
	}
	b.dbs[file] = db
	return db, nil
}

// sqliteOrAbsent refuses a path that holds anything but an SQLite database
// or an empty file: SQLite would take a short file of any content for an
// empty database and overwrite it.
func sqliteOrAbsent(file string) error {
	f, err := os.Open(file)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return errors.New("handlers: kv: not a regular file")
	}
	header := make([]byte, len(sqliteHeader))
	if n, _ := io.ReadFull(f, header); n == 0 && st.Size() == 0 {
		return nil
	}
	if string(header) != sqliteHeader {
		return errors.New("handlers: kv: not an SQLite database")
	}
	return nil
}

const sqliteHeader = "SQLite format 3\x00"

// CheckGrant is asked by the Broker at admission (broker.GrantChecker):
// under a grant's key_prefix, the key of a get or put and the prefix of a
// list must start with it. Other malformed arguments are the call's own
// failure (bad_arguments), not the grant's.
func (h *kvHandler) CheckGrant(args any) (pointer string, ok bool) {
	m, _ := args.(map[string]any)
	name := "key"
	if h.op == KVList {
		name = "prefix"
	}
	if s, isString := m[name].(string); isString && !strings.HasPrefix(s, h.keyPrefix) {
		return "/" + name, false
	}
	return "", true
}

// Call performs the handler's operation:
//
//	get  {"key": K}             -> {"found": true, "key": K, "value": V} or {"found": false, "key": K}
//	put  {"key": K, "value": V} -> {"key": K, "stored": true}
//	list {"prefix"?: P, "limit"?: 1..100} -> {"keys": [...sorted], "truncated": bool}
//
// Under a grant's key_prefix, a list without prefix lists the keys under
// key_prefix; a key or prefix outside it is refused (kv_key_not_granted:
// the Broker refused it before, as grant_denied).
func (h *kvHandler) Call(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	if err := ctx.Err(); err != nil {
		return nil, cancelled(err)
	}
	req, err := h.parse(args)
	if err != nil {
		return nil, err
	}
	return h.run(ctx, h.db, req)
}

// kvRequest is a call's arguments, checked.
type kvRequest struct {
	key    string // get, put
	value  string // put: canonical JSON
	prefix string // list
	limit  int    // list
}

// kvQuerier is a database or one of its transactions (strict mode runs
// an operation inside its acceptance transaction).
type kvQuerier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// parse checks a call's arguments for the handler's operation; a key or
// prefix outside the grant's key_prefix is kv_key_not_granted.
func (h *kvHandler) parse(args json.RawMessage) (kvRequest, error) {
	var in struct {
		Key    *string         `json:"key"`
		Value  json.RawMessage `json:"value"`
		Prefix *string         `json:"prefix"`
		Limit  *int            `json:"limit"`
	}
	if canonjson.DecodeStrict(args, canonjson.MaxGuestBytes, &in) != nil {
		return kvRequest{}, fail(CodeBadArguments)
	}
	switch h.op {
	case KVGet, KVPut:
		if in.Key == nil || in.Prefix != nil || in.Limit != nil || (h.op == KVGet) != (in.Value == nil) {
			return kvRequest{}, fail(CodeBadArguments)
		}
		if !validKVKey(*in.Key) {
			return kvRequest{}, fail(CodeKVBadKey)
		}
		if !strings.HasPrefix(*in.Key, h.keyPrefix) {
			return kvRequest{}, fail(CodeKVKeyNotGranted)
		}
		req := kvRequest{key: *in.Key}
		if h.op == KVPut {
			value, err := canonjson.Canonical(in.Value)
			if err != nil {
				return kvRequest{}, fail(CodeBadArguments)
			}
			if len(value) > MaxKVValueBytes {
				return kvRequest{}, fail(CodeKVValueTooLarge)
			}
			req.value = string(value)
		}
		return req, nil
	}
	if in.Key != nil || in.Value != nil {
		return kvRequest{}, fail(CodeBadArguments)
	}
	req := kvRequest{prefix: h.keyPrefix, limit: MaxKVList}
	if in.Prefix != nil {
		req.prefix = *in.Prefix
		if len(req.prefix) > MaxKVKeyBytes || hasControl(req.prefix) {
			return kvRequest{}, fail(CodeKVBadKey)
		}
		if !strings.HasPrefix(req.prefix, h.keyPrefix) {
			return kvRequest{}, fail(CodeKVKeyNotGranted)
		}
	}
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxKVList {
			return kvRequest{}, fail(CodeBadArguments)
		}
		req.limit = *in.Limit
	}
	return req, nil
}

// run performs a checked request on q.
func (h *kvHandler) run(ctx context.Context, q kvQuerier, req kvRequest) (json.RawMessage, error) {
	switch h.op {
	case KVGet:
		return h.get(ctx, q, req)
	case KVPut:
		return h.put(ctx, q, req)
	default:
		return h.list(ctx, q, req)
	}
}

func (h *kvHandler) get(ctx context.Context, q kvQuerier, req kvRequest) (json.RawMessage, error) {
	value, found, err := h.value(ctx, q, req.key)
	if err != nil {
		return nil, err
	}
	key, _ := json.Marshal(req.key)
	if !found {
		return json.RawMessage(`{"found":false,"key":` + string(key) + `}`), nil
	}
	return json.RawMessage(`{"found":true,"key":` + string(key) + `,"value":` + value + `}`), nil
}

// value reads one key's canonical value.
func (h *kvHandler) value(ctx context.Context, q kvQuerier, key string) (value string, found bool, err error) {
	err = q.QueryRowContext(ctx, `SELECT value FROM apysup_kv WHERE namespace = ? AND key = ?`, h.namespace, key).Scan(&value)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, dbError(ctx)
	}
	return value, true, nil
}

func (h *kvHandler) put(ctx context.Context, q kvQuerier, req kvRequest) (json.RawMessage, error) {
	if _, err := q.ExecContext(ctx, `INSERT INTO apysup_kv (namespace, key, value) VALUES (?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value`, h.namespace, req.key, req.value); err != nil {
		return nil, dbError(ctx)
	}
	key, _ := json.Marshal(req.key)
	return json.RawMessage(`{"key":` + string(key) + `,"stored":true}`), nil
}

func (h *kvHandler) list(ctx context.Context, q kvQuerier, req kvRequest) (json.RawMessage, error) {
	// Keys sharing a prefix are contiguous in binary (memcmp) order from the
	// prefix itself on, so the scan stops at the first key without it.
	rows, err := q.QueryContext(ctx, `SELECT key FROM apysup_kv WHERE namespace = ? AND key >= ? ORDER BY key LIMIT ?`,
		h.namespace, req.prefix, req.limit+1)
	if err != nil {
		return nil, dbError(ctx)
	}
	defer rows.Close()
	keys := []string{}
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, dbError(ctx)
		}
		if !strings.HasPrefix(k, req.prefix) {
			break
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(ctx)
	}
	truncated := len(keys) > req.limit
	if truncated {
		keys = keys[:req.limit]
	}
	out, err := json.Marshal(struct {
		Keys      []string `json:"keys"`
		Truncated bool     `json:"truncated"`
	}{keys, truncated})
	if err != nil {
		return nil, fail(CodeKVFailed)
	}
	return out, nil
}

func validKVKey(k string) bool {
	return k != "" && len(k) <= MaxKVKeyBytes && !hasControl(k)
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0
}

func dbError(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return cancelled(err)
	}
	return fail(CodeKVFailed)
}
