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

func (b *builder) kv(path string, c plan.ManifestCapability, g *plan.KVGrant) any {
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
	f.Done()
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
		return h
	}
	db, err := b.openKV(file)
	if err != nil {
		b.problems = append(b.problems, problem(CodeHandlerSetup, path+".config.path", "cannot open the SQLite database"))
		return nil
	}
	h.db = db
	return h
}

// openKV opens (once per path) a database in WAL mode with a busy timeout;
// every handler of that file shares the *sql.DB.
func (b *builder) openKV(file string) (*sql.DB, error) {
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
	if _, err := db.Exec(kvSchema); err != nil {
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
	switch h.op {
	case KVGet:
		return h.get(ctx, args)
	case KVPut:
		return h.put(ctx, args)
	default:
		return h.list(ctx, args)
	}
}

func (h *kvHandler) get(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		Key *string `json:"key"`
	}
	if canonjson.DecodeStrict(args, canonjson.MaxGuestBytes, &in) != nil || in.Key == nil {
		return nil, fail(CodeBadArguments)
	}
	if !validKVKey(*in.Key) {
		return nil, fail(CodeKVBadKey)
	}
	if !strings.HasPrefix(*in.Key, h.keyPrefix) {
		return nil, fail(CodeKVKeyNotGranted)
	}
	var value string
	err := h.db.QueryRowContext(ctx, `SELECT value FROM apysup_kv WHERE namespace = ? AND key = ?`, h.namespace, *in.Key).Scan(&value)
	key, _ := json.Marshal(*in.Key)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return json.RawMessage(`{"found":false,"key":` + string(key) + `}`), nil
	case err != nil:
		return nil, dbError(ctx)
	}
	return json.RawMessage(`{"found":true,"key":` + string(key) + `,"value":` + value + `}`), nil
}

func (h *kvHandler) put(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		Key   *string         `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	if canonjson.DecodeStrict(args, canonjson.MaxGuestBytes, &in) != nil || in.Key == nil || in.Value == nil {
		return nil, fail(CodeBadArguments)
	}
	if !validKVKey(*in.Key) {
		return nil, fail(CodeKVBadKey)
	}
	if !strings.HasPrefix(*in.Key, h.keyPrefix) {
		return nil, fail(CodeKVKeyNotGranted)
	}
	value, err := canonjson.Canonical(in.Value)
	if err != nil {
		return nil, fail(CodeBadArguments)
	}
	if len(value) > MaxKVValueBytes {
		return nil, fail(CodeKVValueTooLarge)
	}
	if _, err := h.db.ExecContext(ctx, `INSERT INTO apysup_kv (namespace, key, value) VALUES (?, ?, ?)
		ON CONFLICT (namespace, key) DO UPDATE SET value = excluded.value`, h.namespace, *in.Key, string(value)); err != nil {
		return nil, dbError(ctx)
	}
	key, _ := json.Marshal(*in.Key)
	return json.RawMessage(`{"key":` + string(key) + `,"stored":true}`), nil
}

func (h *kvHandler) list(ctx context.Context, args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		Prefix *string `json:"prefix"`
		Limit  *int    `json:"limit"`
	}
	if canonjson.DecodeStrict(args, canonjson.MaxGuestBytes, &in) != nil {
		return nil, fail(CodeBadArguments)
	}
	prefix, limit := h.keyPrefix, MaxKVList
	if in.Prefix != nil {
		prefix = *in.Prefix
		if len(prefix) > MaxKVKeyBytes || hasControl(prefix) {
			return nil, fail(CodeKVBadKey)
		}
		if !strings.HasPrefix(prefix, h.keyPrefix) {
			return nil, fail(CodeKVKeyNotGranted)
		}
	}
	if in.Limit != nil {
		if *in.Limit < 1 || *in.Limit > MaxKVList {
			return nil, fail(CodeBadArguments)
		}
		limit = *in.Limit
	}
	// Keys sharing a prefix are contiguous in binary (memcmp) order from the
	// prefix itself on, so the scan stops at the first key without it.
	rows, err := h.db.QueryContext(ctx, `SELECT key FROM apysup_kv WHERE namespace = ? AND key >= ? ORDER BY key LIMIT ?`,
		h.namespace, prefix, limit+1)
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
		if !strings.HasPrefix(k, prefix) {
			break
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, dbError(ctx)
	}
	truncated := len(keys) > limit
	if truncated {
		keys = keys[:limit]
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
