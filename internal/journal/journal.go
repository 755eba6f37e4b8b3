package journal

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	_ "modernc.org/sqlite" // the SQLite driver already used by the kv handler

	"github.com/apysup/apysup/internal/canonjson"
)

// Error codes (docs/spec.md section 9).
const (
	// CodeUnavailable: the state directory cannot be opened or written
	// (missing, read-only, disk full). Nothing was half-written: the run or
	// call it guards is refused before anything happens.
	CodeUnavailable = "journal_unavailable"
	// CodeRolledBack: the database is older than its epoch file (a restored
	// copy, or a lost write): it may have forgotten effects.
	CodeRolledBack = "journal_rolled_back"
	// CodeForeign: the epoch file and the database are of different
	// journals, or one of the two is missing.
	CodeForeign = "journal_foreign"
	// CodeCorrupt: the database does not have the journal's shape.
	CodeCorrupt = "journal_corrupt"
	// CodeKeyConflict: an idempotency key was used again with another
	// script, arguments or Plan.
	CodeKeyConflict = "idempotency_key_conflict"
	// CodeKeyCompacted: the run under this key completed and was compacted
	// to a tombstone; its RunResult is no longer kept.
	CodeKeyCompacted = "idempotency_key_compacted"
	// CodeCallIdentityMismatch: a call id met its journal entry with
	// another request.
	CodeCallIdentityMismatch = "call_identity_mismatch"
	// CodeDispatchUnknown: the call's dispatch began and no outcome was
	// recorded: it may have acted; it is never retried blindly.
	CodeDispatchUnknown = "dispatch_outcome_unknown"
	// CodeRunActive: another live process holds the run under this key.
	CodeRunActive = "idempotency_key_in_use"
	// CodeInvalid: a caller passed a malformed key, id or digest.
	CodeInvalid = "journal_invalid_argument"
)

// Error is a typed journal error.
type Error struct {
	Code string
	Msg  string
	Err  error // the cause, if any (an I/O error; never guest input)
}

func (e *Error) Error() string {
	if e.Err != nil {
		return e.Code + ": " + e.Msg + ": " + e.Err.Error()
	}
	return e.Code + ": " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrorCode returns the stable code (the project's error convention).
func (e *Error) ErrorCode() string { return e.Code }

func fail(code, msg string, err error) error { return &Error{Code: code, Msg: msg, Err: err} }

// File names in the state directory.
const (
	dbName    = "journal.db"
	epochName = "journal.epoch"
	// lockName is flocked by the process writing the journal: processes
	// sharing a state directory take turns at each commit and its epoch
	// write, and at Open.
	lockName = "journal.lock"
	// SchemaVersion tags the epoch file and the database.
	SchemaVersion = "apysup.journal.v1"
)

// Options configure a journal.
type Options struct {
	// Failpoint, if set, is called with the name of each boundary just
	// before and just after it becomes durable ("call_intent.before",
	// "call_intent.committed", "epoch.written", ...). The fault campaign
	// uses it to kill the process at every boundary; production code
	// leaves it nil.
	Failpoint func(name string)
	// Now is the clock (tests); time.Now when nil.
	Now func() time.Time
}

// Journal is an open state directory. It is safe for concurrent use, and
// several processes may open one directory at once: writes are serialised
// by a mutex within a process and by an flock of journal.lock between
// processes, and each commit continues the log from the database's last
// entry, whoever wrote it.
type Journal struct {
	dir  string
	db   *sql.DB
	opts Options
	lock *os.File // journal.lock, flocked around Open and each commit

	mu   sync.Mutex
	id   string // the journal's random identity, in the database and the epoch file
	seq  int64  // the last committed log entry, as of the last commit or Open
	head string // its digest
}

type epochDoc struct {
	SchemaVersion string `json:"schema_version"`
	JournalID     string `json:"journal_id"`
	Seq           int64  `json:"seq"`
	Head          string `json:"head"`
}

const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS log (
	seq INTEGER PRIMARY KEY, prev TEXT NOT NULL, kind TEXT NOT NULL,
	run_key TEXT NOT NULL, call_id TEXT NOT NULL, body TEXT NOT NULL, digest TEXT NOT NULL, at INTEGER NOT NULL) STRICT;
CREATE TABLE IF NOT EXISTS runs (
	key TEXT PRIMARY KEY, plan_sha256 TEXT NOT NULL, request_sha256 TEXT NOT NULL,
	state TEXT NOT NULL, attempts INTEGER NOT NULL, owner TEXT NOT NULL,
	status TEXT NOT NULL DEFAULT '', result BLOB, result_sha256 TEXT NOT NULL DEFAULT '',
	first_seq INTEGER NOT NULL, begun_seq INTEGER NOT NULL, ended_seq INTEGER NOT NULL DEFAULT 0, ended_at INTEGER NOT NULL DEFAULT 0) STRICT;
CREATE TABLE IF NOT EXISTS calls (
	run_key TEXT NOT NULL, call_id TEXT NOT NULL, request_sha256 TEXT NOT NULL,
	state TEXT NOT NULL, approval_id TEXT NOT NULL DEFAULT '', approval_state TEXT NOT NULL DEFAULT '', approval_not_after INTEGER NOT NULL DEFAULT 0,
	outcome TEXT NOT NULL DEFAULT '', error_code TEXT NOT NULL DEFAULT '',
	response BLOB, response_sha256 TEXT NOT NULL DEFAULT '',
	receipt BLOB, receipt_id TEXT NOT NULL DEFAULT '',
	binding BLOB, projection BLOB,
	PRIMARY KEY (run_key, call_id)) STRICT;
`

// addedColumns are the calls columns a journal created before them lacks
// (the effect binding and a provider's decision projection): Open adds
// them, empty, so that older journals stay readable.
var addedColumns = []string{"binding", "projection"}

// Open opens (or creates) the journal in dir, creating dir with mode 0700
// if it does not exist. It refuses a database older than its epoch file
// (CodeRolledBack), a database without its epoch file or the reverse, and
// two files of different journals (CodeForeign).
func Open(dir string, opts Options) (*Journal, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fail(CodeUnavailable, "cannot create the state directory", err)
	}
	lock, err := os.OpenFile(filepath.Join(dir, lockName), os.O_RDWR|os.O_CREATE|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fail(CodeUnavailable, "cannot open the journal's lock file", err)
	}
	j := &Journal{dir: dir, opts: opts, lock: lock}
	if err := j.flock(); err != nil {
		lock.Close()
		return nil, err
	}
	err = j.open()
	j.unflock()
	if err != nil {
		if j.db != nil {
			j.db.Close()
		}
		lock.Close()
		return nil, err
	}
	return j, nil
}

// open checks (or creates) the database and the epoch file, holding the
// lock: no other process is between a commit and its epoch write, or
// creating the journal, while it looks.
func (j *Journal) open() error {
	dbPath, epochPath := filepath.Join(j.dir, dbName), filepath.Join(j.dir, epochName)
	_, dbErr := os.Lstat(dbPath)
	epochRaw, epochErr := os.ReadFile(epochPath)
	if dbErr == nil && errors.Is(epochErr, os.ErrNotExist) && emptyJournal(dbPath) {
		// A creation interrupted before its epoch file was written (by a
		// version that created the database in place): no entry was ever
		// recorded, so nothing can be forgotten.
		if err := removeDB(dbPath); err != nil {
			return fail(CodeUnavailable, "cannot remove an unfinished journal", err)
		}
		dbErr = os.ErrNotExist
	}
	if errors.Is(dbErr, os.ErrNotExist) && epochErr == nil && epochAtZero(epochRaw) {
		// A creation interrupted between its epoch file and the rename of
		// its database: an epoch at entry 0 recorded nothing either.
		if err := os.Remove(epochPath); err != nil {
			return fail(CodeUnavailable, "cannot remove an unfinished journal", err)
		}
		epochErr = os.ErrNotExist
	}
	switch {
	case dbErr == nil && errors.Is(epochErr, os.ErrNotExist):
		return fail(CodeForeign, "the journal database has no epoch file: refusing to trust it", nil)
	case errors.Is(dbErr, os.ErrNotExist) && epochErr == nil:
		return fail(CodeForeign, "the epoch file names a journal whose database is missing", nil)
	case dbErr != nil && !errors.Is(dbErr, os.ErrNotExist):
		return fail(CodeUnavailable, "cannot read the state directory", dbErr)
	case epochErr != nil && !errors.Is(epochErr, os.ErrNotExist):
		return fail(CodeUnavailable, "cannot read the epoch file", epochErr)
	}
	if errors.Is(dbErr, os.ErrNotExist) {
		if err := j.create(dbPath); err != nil {
			return err
		}
		var err error
		if epochRaw, err = os.ReadFile(epochPath); err != nil {
			return fail(CodeUnavailable, "cannot read the epoch file", err)
		}
	}
	db, err := openDB(dbPath)
	if err != nil {
		return err
	}
	j.db = db
	return j.load(epochRaw)
}

// openDB opens the journal database: WAL, durable commits, immediate
// write transactions, one connection (every statement sees the last
// commit).
func openDB(path string) (*sql.DB, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(5000)&_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fail(CodeUnavailable, "cannot open the journal database", err)
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// integrity is SQLite's integrity_check of db: "" when it is sound, else
// its first finding. A damaged index (a byte of its pages changed) makes
// a lookup miss a record the table holds: a completed run's key would run
// again, its calls dispatched twice, while the log's chain still verifies.
func integrity(db *sql.DB) string {
	var result string
	if err := db.QueryRow(`PRAGMA integrity_check(1)`).Scan(&result); err != nil {
		return err.Error()
	}
	if result != "ok" {
		return result
	}
	return ""
}

// create makes a new journal so that no interruption leaves a database
// without its epoch file: the database is built and closed under a
// temporary name, the epoch file (entry 0) is written, and only then is
// the database renamed into place.
func (j *Journal) create(dbPath string) error {
	tmp := dbPath + ".new"
	if err := removeDB(tmp); err != nil {
		return fail(CodeUnavailable, "cannot remove an unfinished journal", err)
	}
	id := make([]byte, 16)
	if _, err := rand.Read(id); err != nil {
		return fail(CodeUnavailable, "no randomness for the journal id", err)
	}
	j.id = hex.EncodeToString(id)
	db, err := openDB(tmp)
	if err != nil {
		return err
	}
	err = initDB(db, j.id)
	if cerr := db.Close(); err == nil && cerr != nil {
		err = fail(CodeUnavailable, "cannot write the journal database", cerr)
	}
	if err == nil {
		err = j.writeEpoch()
	}
	if err == nil {
		if rerr := os.Rename(tmp, dbPath); rerr != nil {
			err = fail(CodeUnavailable, "cannot write the journal database", rerr)
		} else {
			err = syncDir(j.dir)
		}
	}
	if err != nil {
		_ = removeDB(tmp)
		_ = os.Remove(filepath.Join(j.dir, epochName))
	}
	return err
}

// initDB creates the tables and records the journal's identity.
func initDB(db *sql.DB, id string) error {
	var mode string
	if err := db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fail(CodeUnavailable, "cannot open the journal database", err)
	}
	tx, err := db.Begin()
	if err != nil {
		return fail(CodeUnavailable, "cannot write the journal database", err)
	}
	defer tx.Rollback()
	if _, err := tx.Exec(schema); err != nil {
		return fail(CodeUnavailable, "cannot create the journal's tables", err)
	}
	if _, err := tx.Exec(`INSERT INTO meta (key, value) VALUES ('schema_version', ?), ('journal_id', ?)`, SchemaVersion, id); err != nil {
		return fail(CodeUnavailable, "cannot write the journal database", err)
	}
	if err := tx.Commit(); err != nil {
		return fail(CodeUnavailable, "cannot write the journal database", err)
	}
	return nil
}

// removeDB removes a database and its WAL files.
func removeDB(path string) error {
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		if err := os.Remove(f); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return nil
}

// epochAtZero reports whether raw is an epoch file at entry 0.
func epochAtZero(raw []byte) bool {
	var ep epochDoc
	return canonjson.DecodeStrict(raw, 4096, &ep) == nil && ep.SchemaVersion == SchemaVersion && ep.Seq == 0 && ep.Head == ""
}

// load checks the database against its epoch file, rolling the epoch
// forward when the database is one entry ahead (a process died between a
// commit and its epoch write).
func (j *Journal) load(epochRaw []byte) error {
	var mode string
	if err := j.db.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		return fail(CodeUnavailable, "cannot open the journal database", err)
	}
	if mode != "wal" {
		return fail(CodeUnavailable, "the journal database is not in WAL mode", nil)
	}
	if damage := integrity(j.db); damage != "" {
		return fail(CodeCorrupt, "the journal database is damaged ("+damage+")", nil)
	}
	var ep epochDoc
	if err := canonjson.DecodeStrict(epochRaw, 4096, &ep); err != nil || ep.SchemaVersion != SchemaVersion || ep.JournalID == "" {
		return fail(CodeCorrupt, "the epoch file is not an apysup journal epoch", err)
	}
	var version string
	if err := j.db.QueryRow(`SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&version); err != nil || version != SchemaVersion {
		return fail(CodeCorrupt, "the database is not an apysup journal", err)
	}
	if err := j.db.QueryRow(`SELECT value FROM meta WHERE key = 'journal_id'`).Scan(&j.id); err != nil {
		return fail(CodeCorrupt, "the database has no journal id", err)
	}
	if j.id != ep.JournalID {
		return fail(CodeForeign, "the epoch file and the database belong to different journals", nil)
	}
	if err := j.addColumns(); err != nil {
		return err
	}
	var prev string
	err := j.db.QueryRow(`SELECT seq, digest, prev FROM log ORDER BY seq DESC LIMIT 1`).Scan(&j.seq, &j.head, &prev)
	if errors.Is(err, sql.ErrNoRows) {
		j.seq, j.head, prev = 0, "", ""
	} else if err != nil {
		return fail(CodeCorrupt, "cannot read the journal's log", err)
	}
	switch {
	case j.seq == ep.Seq && j.head == ep.Head:
		return nil
	case j.seq == ep.Seq+1 && prev == ep.Head:
		// The process died between a commit and its epoch write: the
		// database is one entry ahead, as it may be. Roll the epoch forward.
		return j.writeEpoch()
	case j.seq < ep.Seq:
		return fail(CodeRolledBack, fmt.Sprintf("the database ends at entry %d, its epoch file at %d: an older copy of the database; refusing to forget effects", j.seq, ep.Seq), nil)
	default:
		return fail(CodeForeign, "the database's last entry does not continue its epoch file", nil)
	}
}

// emptyJournal reports whether the database at path holds no log entry
// (or no log at all): a journal whose creation was interrupted.
func emptyJournal(path string) bool {
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(5000)")
	if err != nil {
		return false
	}
	defer db.Close()
	var tables, entries int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'log'`).Scan(&tables); err != nil {
		return false
	}
	if tables == 0 {
		return true
	}
	if err := db.QueryRow(`SELECT count(*) FROM log`).Scan(&entries); err != nil {
		return false
	}
	return entries == 0
}

// writeEpoch records the last committed entry outside the database: write
// a temporary file, fsync it, rename it over the epoch file, fsync the
// directory.
func (j *Journal) writeEpoch() error {
	doc, err := json.Marshal(epochDoc{SchemaVersion: SchemaVersion, JournalID: j.id, Seq: j.seq, Head: j.head})
	if err != nil {
		return fail(CodeUnavailable, "cannot encode the epoch", err)
	}
	tmp := filepath.Join(j.dir, epochName+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fail(CodeUnavailable, "cannot write the epoch file", err)
	}
	_, werr := f.Write(doc)
	serr := f.Sync()
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return fail(CodeUnavailable, "cannot write the epoch file", err)
	}
	if err := os.Rename(tmp, filepath.Join(j.dir, epochName)); err != nil {
		os.Remove(tmp)
		return fail(CodeUnavailable, "cannot write the epoch file", err)
	}
	if err := syncDir(j.dir); err != nil {
		return err
	}
	j.failpoint("epoch.written")
	return nil
}

// syncDir makes a rename in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fail(CodeUnavailable, "cannot sync the state directory", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fail(CodeUnavailable, "cannot sync the state directory", err)
	}
	return nil
}

// flock takes the state directory's write lock, waiting for another
// process's commit to end; unflock releases it. The kernel releases the
// lock of a process that dies, so a killed writer never holds it.
func (j *Journal) flock() error {
	for {
		err := syscall.Flock(int(j.lock.Fd()), syscall.LOCK_EX)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EINTR) {
			return fail(CodeUnavailable, "cannot lock the journal", err)
		}
	}
}

func (j *Journal) unflock() { _ = syscall.Flock(int(j.lock.Fd()), syscall.LOCK_UN) }

// Close closes the database. The journal stays valid on disk.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	err := j.db.Close()
	if cerr := j.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// Dir is the state directory.
func (j *Journal) Dir() string { return j.dir }

func (j *Journal) failpoint(name string) {
	if j.opts.Failpoint != nil {
		j.opts.Failpoint(name)
	}
}

// entry is one log entry before it is chained.
type entry struct {
	kind   string
	runKey string
	callID string
	body   map[string]any
}

// commit appends e to the log and applies apply to the state tables in one
// transaction, then records the new head in the epoch file. The write is
// durable (synchronous=FULL) when commit returns nil; on an error nothing
// of it is in the database, except when the epoch write alone failed,
// which the next Open repairs (the database is one entry ahead).
func (j *Journal) commit(ctx context.Context, e entry, apply func(tx *sql.Tx, seq int64) error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.failpoint(e.kind + ".before")
	if err := j.flock(); err != nil {
		return err
	}
	defer j.unflock()
	tx, err := j.db.BeginTx(ctx, nil)
	if err != nil {
		return fail(CodeUnavailable, "cannot write the journal", err)
	}
	defer tx.Rollback()
	// Another process sharing the directory may have appended since.
	err = tx.QueryRow(`SELECT seq, digest FROM log ORDER BY seq DESC LIMIT 1`).Scan(&j.seq, &j.head)
	if errors.Is(err, sql.ErrNoRows) {
		j.seq, j.head = 0, ""
	} else if err != nil {
		return fail(CodeUnavailable, "cannot read the journal's log", err)
	}
	seq := j.seq + 1
	body, err := canonjson.Marshal(e.body)
	if err != nil {
		return fail(CodeInvalid, "an entry body is not canonical JSON", err)
	}
	digest := entryDigest(seq, j.head, e.kind, e.runKey, e.callID, body)
	if _, err := tx.Exec(`INSERT INTO log (seq, prev, kind, run_key, call_id, body, digest, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		seq, j.head, e.kind, e.runKey, e.callID, string(body), digest, j.opts.Now().UnixMilli()); err != nil {
		return fail(CodeUnavailable, "cannot write the journal", err)
	}
	if err := apply(tx, seq); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fail(CodeUnavailable, "cannot write the journal", err)
	}
	j.seq, j.head = seq, digest
	j.failpoint(e.kind + ".committed")
	return j.writeEpoch()
}

// entryDigest chains an entry: the apysup.journal.v1 digest of its
// canonical form, which includes the previous entry's digest.
func entryDigest(seq int64, prev, kind, runKey, callID string, body []byte) string {
	doc, _ := canonjson.Marshal(map[string]any{
		"seq": seq, "prev": prev, "kind": kind, "run_key": runKey, "call_id": callID, "body": json.RawMessage(body),
	})
	return canonjson.Digest(canonjson.DomainJournal, doc)
}

// addColumns adds the calls columns an older journal lacks.
func (j *Journal) addColumns() error {
	for _, col := range addedColumns {
		var n int
		if err := j.db.QueryRow(`SELECT COUNT(*) FROM pragma_table_info('calls') WHERE name = ?`, col).Scan(&n); err != nil {
			return fail(CodeCorrupt, "cannot read the journal's tables", err)
		}
		if n == 0 {
			if _, err := j.db.Exec(`ALTER TABLE calls ADD COLUMN ` + col + ` BLOB`); err != nil {
				return fail(CodeUnavailable, "cannot add a column to the journal's calls", err)
			}
		}
	}
	return nil
}
