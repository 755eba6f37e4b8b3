#!/usr/bin/python3.11
"""A strict provider for apysup's exec handler: a durable note-publishing store.

It speaks the provider protocol of docs/provider-protocol.md: one JSON
request on stdin, one JSON answer on stdout, exit 0. It uses only the
standard library (sqlite3, hmac), and shares no code with apysup: it is the
proof that the protocol can be implemented outside Go.

The effect: publishing a note sets the body of the note with a title. A
body equal to the current one is a factual no-change. The store's own
policy denies titles under "restricted/" (a trusted, replayable denial).

Callers hold credentials the store issued (`issue`): a key, a tenant, a
subject and the grants (policy digests) it may present. The exec handler
presents each call with an HMAC of the binding digest under the key; the
security context (tenant, subject, sender key) scopes every identity.

It declares all eight guarantees:
  exact_binding         it recomputes the request digest from the arguments
                        it will apply, and the effect id, authorization id
                        and binding digest as apysup's EffectBinding.Seal
                        does (RFC 8785 JSON, sha256 of "DOMAIN\\0bytes"),
                        with its own provider id and the acceptance it
                        serves the capability with; a mismatch, like an
                        unauthenticated presentation, reserves nothing
  single_use            an authorization id decides at most one effect
  exact_replay          the same binding again returns the stored decision
                        and result, never a second effect
  atomic_commit         identities, the note and the decision receipt are
                        written in one SQLite transaction
  revocation_ordering   revocations and decisions draw their sequence from
                        one counter, inside the same write transactions
  query_absence         absent only from a read under the write lock, the
                        current epoch and the fence, with a witness digest
  retention_tombstones  `compact` keeps receipts for the declared retention,
                        then keeps a tombstone that still refuses an effect
  epoch_fence           the epoch registry is a separate file the database
                        cannot roll back: it names the current epoch and the
                        highest sequence committed in it; a database behind
                        either answers nothing until `advance` retires the
                        epoch

Commands (a store is created by `init`; the exec handler runs `serve`):
  init    --db DB --epoch-file EF --provider-id ID --epoch E [--retention-seconds N]
          [--capability NAME=strict|no_blind_retry|off ...]
  issue   --db DB --epoch-file EF --tenant T --subject S --policy DIGEST... --key-file F
  serve   --db DB --epoch-file EF
  advance --db DB --epoch-file EF --epoch NEW     retire the current epoch
  compact --db DB --epoch-file EF --now UNIX      receipts past retention -> tombstones
  vectors FILE                                    check the binding golden vectors

The clock of a decision is NOTES_PROVIDER_NOW (unix seconds) when set, so
that tests are deterministic; otherwise the system clock. For crash and
concurrency tests, NOTES_PROVIDER_KILL_AT=POINT kills the process with
SIGKILL at a transaction boundary, and NOTES_PROVIDER_BARRIER=DIR:POINT
makes it wait there (it creates DIR/<pid>.ready and waits for DIR/go);
POINT "*.start" matches every operation's start. Unset, they do nothing.
"""

import argparse
import decimal
import fcntl
import hashlib
import hmac
import json
import math
import os
import secrets
import signal
import sqlite3
import sys
import time
import urllib.parse

PROTOCOL = "apysup.provider.v1"
GUARANTEES = [
    "exact_binding", "single_use", "exact_replay", "atomic_commit",
    "revocation_ordering", "query_absence", "retention_tombstones", "epoch_fence",
]
# apysup's digest domains (docs/spec.md section 3).
DOMAIN_REQUEST = "apysup.request.v1"
DOMAIN_EFFECT = "apysup.effect.v1"
DOMAIN_AUTHORIZATION = "apysup.authorization.v1"
DOMAIN_EFFECT_BINDING = "apysup.effect_binding.v1"
BINDING_SCHEMA = "apysup.effect_binding.v1"
PROJECTION_SCHEMA = "apysup.provider_decision_projection.v1"
# The presentation's HMAC labels (docs/provider-protocol.md).
KEY_ID_LABEL = b"apysup.provider.key_id.v1"
PRESENTATION_LABEL = b"apysup.provider.presentation.v1"
# This tool's own digest domains, for its private receipts and references.
DOMAIN_DECISION_RECEIPT = "notes-provider.decision_receipt.v1"
DOMAIN_POLICY_RECEIPT = "notes-provider.policy_order_receipt.v1"
DOMAIN_ABSENCE = "notes-provider.absence.v1"
DOMAIN_CONTEXT = "notes-provider.context.v1"
DOMAIN_REF = "notes-provider.ref.v1"
EPOCHS_SCHEMA = "notes-provider.epochs.v1"

MAX_REQUEST_BYTES = 4 << 20
MAX_TITLE_CHARS = 200
MAX_BODY_CHARS = 64 << 10
DENIED_PREFIX = "restricted/"
EXIT_FAILED = 3  # nothing usable was decided or read: the host keeps the outcome unknown
ACCEPTANCE_MODES = ["strict", "no_blind_retry", "off"]  # a binding's acceptance, as the Plan names it

class Failure(Exception):
    """The store cannot answer (the host sees a failed command)."""


# ---------------------------------------------------------------- RFC 8785

def canonical(value):
    """The RFC 8785 (JSON Canonicalization Scheme) text of a JSON value."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return canonical_string(value)
    if isinstance(value, (int, float)):
        return canonical_number(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    if isinstance(value, dict):
        # Keys sort by their UTF-16 code units.
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(canonical_string(k) + ":" + canonical(value[k]) for k in keys) + "}"
    raise ValueError("not a JSON value")


_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def canonical_string(s):
    s.encode("utf-8")  # a lone surrogate cannot be encoded: refused
    out = ['"']
    for ch in s:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ch < " ":
            out.append("\\u%04x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def canonical_number(n):
    """ECMAScript's Number.prototype.toString of the IEEE-754 double n."""
    x = float(n)  # an integer becomes the double JSON means (OverflowError if too large)
    if not math.isfinite(x):
        raise ValueError("not a finite number")
    if x == 0:
        return "0"
    if x < 0:
        return "-" + canonical_number(-x)
    # repr gives the shortest digits that round-trip, as ECMAScript does.
    _, digit_tuple, exp = decimal.Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digit_tuple))
    stripped = digits.rstrip("0")
    exp += len(digits) - len(stripped)
    digits = stripped
    k = len(digits)
    n = exp + k  # x = 0.digits * 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
    return mantissa + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def digest(domain, canonical_text):
    """apysup's domain-separated digest: sha256(DOMAIN || 0x00 || bytes)."""
    h = hashlib.sha256(domain.encode("utf-8") + b"\x00" + canonical_text.encode("utf-8"))
    return "sha256:" + h.hexdigest()


def plain_digest(s):
    """How a projection names an identity: the SHA-256 of its string."""
    return "sha256:" + hashlib.sha256(s.encode("utf-8")).hexdigest()


def parse_strict(data):
    """One JSON value: no duplicate keys, no NaN or Infinity, valid UTF-8."""
    def pairs(items):
        obj = {}
        for k, v in items:
            if k in obj:
                raise ValueError("duplicate key")
            obj[k] = v
        return obj

    def constant(name):
        raise ValueError("not JSON: " + name)

    value = json.loads(data.decode("utf-8"), object_pairs_hook=pairs, parse_constant=constant)
    canonical(value)  # lone surrogates, huge numbers
    return value


# ---------------------------------------------------------------- binding

BINDING_STRINGS = ["schema_version", "run_id", "plan_sha256", "call_id", "capability", "request_sha256",
                   "acceptance", "effect_id", "authorization_id", "binding_sha256"]
BINDING_OPTIONAL = ["policy_sha256", "approval_request_id", "provider_id", "provider_epoch"]  # omitted when empty
HANDLER_STRINGS = ["kind", "id", "version", "config_sha256"]


def request_digest(call_id, capability, arguments):
    """RequestDigest: {"arguments","call_id","capability"} in the request domain."""
    return digest(DOMAIN_REQUEST, canonical({"arguments": arguments, "call_id": call_id, "capability": capability}))


def seal(b):
    """The three identities of binding fields b, as EffectBinding.Seal computes them."""
    doc = binding_document(b)
    return doc["effect_id"], doc["authorization_id"], digest(DOMAIN_EFFECT_BINDING, canonical(doc))


def binding_document(b):
    """The document binding_sha256 digests: every field, binding_sha256 empty."""
    effect_id = digest(DOMAIN_EFFECT, canonical(
        {"call_id": b["call_id"], "plan_sha256": b["plan_sha256"], "run_id": b["run_id"]}))
    authorization_id = digest(DOMAIN_AUTHORIZATION, canonical({
        "approval_request_id": b.get("approval_request_id", ""), "call_id": b["call_id"],
        "policy_sha256": b.get("policy_sha256", ""), "run_id": b["run_id"]}))
    doc = {k: b[k] for k in ["run_id", "plan_sha256", "call_id", "capability", "request_sha256", "acceptance"]}
    doc["schema_version"] = BINDING_SCHEMA
    doc["handler"] = {k: b["handler"][k] for k in HANDLER_STRINGS}
    for k in BINDING_OPTIONAL:
        if b.get(k, ""):
            doc[k] = b[k]
    doc["effect_id"] = effect_id
    doc["authorization_id"] = authorization_id
    doc["binding_sha256"] = ""  # the digest covers every field but itself, present and empty
    return doc


def well_formed_binding(b):
    if not isinstance(b, dict) or set(b) - set(BINDING_STRINGS + BINDING_OPTIONAL + ["handler"]):
        return False
    if any(not isinstance(b.get(k), str) for k in BINDING_STRINGS):
        return False
    if any(k in b and (not isinstance(b[k], str) or b[k] == "") for k in BINDING_OPTIONAL):
        return False
    h = b.get("handler")
    return (isinstance(h, dict) and set(h) == set(HANDLER_STRINGS)
            and all(isinstance(h[k], str) for k in HANDLER_STRINGS)
            and b["schema_version"] == BINDING_SCHEMA)


def binding_verified(b, provider_id):
    """The presented identities are the ones b's fields give, for this provider."""
    effect_id, authorization_id, binding_sha256 = seal(b)
    return (b["effect_id"] == effect_id and b["authorization_id"] == authorization_id
            and b["binding_sha256"] == binding_sha256 and b.get("provider_id") == provider_id)


# ---------------------------------------------------------------- test points

def at(point):
    """A transaction boundary, where a test may kill or hold the process."""
    if os.environ.get("NOTES_PROVIDER_KILL_AT") == point:
        os.kill(os.getpid(), signal.SIGKILL)
    barrier = os.environ.get("NOTES_PROVIDER_BARRIER")
    if barrier:
        where, _, pattern = barrier.rpartition(":")
        if pattern == point or (pattern.startswith("*") and point.endswith(pattern[1:])):  # "*.start"
            open(os.path.join(where, "%d.ready" % os.getpid()), "w").close()
            while not os.path.exists(os.path.join(where, "go")):
                time.sleep(0.002)


# ---------------------------------------------------------------- store

SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE credentials(
  key_id TEXT PRIMARY KEY, key TEXT NOT NULL, tenant TEXT NOT NULL, subject TEXT NOT NULL, policies TEXT NOT NULL);
CREATE TABLE decisions(
  epoch TEXT NOT NULL, context TEXT NOT NULL, effect_id TEXT NOT NULL, authorization_id TEXT NOT NULL,
  binding_sha256 TEXT NOT NULL, decision TEXT NOT NULL, reason TEXT NOT NULL,
  sequence INTEGER NOT NULL, policy_order_receipt_sha256 TEXT NOT NULL,
  receipt_sha256 TEXT NOT NULL, decided_at INTEGER NOT NULL,
  receipt TEXT, result TEXT,                 -- NULL once compacted: a tombstone
  PRIMARY KEY(epoch, context, effect_id), UNIQUE(epoch, context, authorization_id));
CREATE TABLE policy_events(                -- activations (issue) and revocations, in the one order
  sequence INTEGER PRIMARY KEY, policy_sha256 TEXT NOT NULL, event TEXT NOT NULL,
  receipt_sha256 TEXT NOT NULL, receipt TEXT NOT NULL, UNIQUE(policy_sha256, event));
CREATE TABLE notes(
  title TEXT PRIMARY KEY, body TEXT NOT NULL, revision INTEGER NOT NULL, effect_id TEXT NOT NULL);
"""
DECISION_COLUMNS = ("epoch, context, effect_id, authorization_id, binding_sha256, decision, reason, sequence, "
                    "policy_order_receipt_sha256, receipt_sha256, decided_at, receipt, result")


def connect(path, create=False):
    """A connection in autocommit mode (transactions are explicit), with a
    rollback journal (a copy of the file is a backup); only init creates."""
    uri = "file:" + urllib.parse.quote(os.path.abspath(path)) + ("?mode=rwc" if create else "?mode=rw")
    db = sqlite3.connect(uri, uri=True, isolation_level=None, timeout=30)
    db.execute("PRAGMA synchronous=FULL")
    return db


def meta(db, key):
    row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    if row is None:
        raise Failure("store not initialised")
    return row[0]


def read_epochs(path):
    try:
        with open(path, "rb") as f:
            reg = parse_strict(f.read(1 << 20))
    except (OSError, ValueError) as e:
        raise Failure("epoch registry unreadable") from e
    if (not isinstance(reg, dict) or reg.get("schema") != EPOCHS_SCHEMA or not isinstance(reg.get("current"), str)
            or not isinstance(reg.get("retired"), list) or not isinstance(reg.get("fence"), int)):
        raise Failure("epoch registry malformed")
    return reg


def write_epochs(path, reg):
    """Replace the registry durably: a new file, fsynced, renamed, the directory fsynced."""
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(canonical(reg).encode("utf-8"))
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    fd = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class registry_lock:
    """Serialises read-modify-write of the epoch registry between processes."""

    def __init__(self, path):
        self.path = path + ".lock"

    def __enter__(self):
        self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        fcntl.flock(self.fd, fcntl.LOCK_EX)

    def __exit__(self, *exc):
        os.close(self.fd)


def ref(kind, *parts):
    """A scoped reference to an identity: what a projection shows of it."""
    return digest(DOMAIN_REF, canonical({"kind": kind, "parts": list(parts)}))


def presentation_mac(key, op, subject):
    return hmac.new(key, PRESENTATION_LABEL + b"\x00" + op.encode() + b"\x00" + subject.encode(), hashlib.sha256).hexdigest()


class Store:
    def __init__(self, db_path, epochs_path):
        self.db = connect(db_path)
        self.epochs_path = epochs_path
        self.provider_id = meta(self.db, "provider_id")
        self.retention = int(meta(self.db, "retention_seconds"))
        self.capabilities = json.loads(meta(self.db, "capabilities"))

    def rollback(self):
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def fenced(self, reg):
        """The store is at the registry's current epoch and not behind its fence."""
        return meta(self.db, "epoch") == reg["current"] and int(meta(self.db, "sequence")) >= reg["fence"]

    def adopt(self, reg):
        """Finish an epoch change interrupted between its two writes: a store
        at an epoch the registry retired, not behind the fence the change
        recorded, moves to the current epoch (in the caller's write
        transaction). A store restored from a backup is behind that fence."""
        epoch = meta(self.db, "epoch")
        if epoch != reg["current"] and epoch in reg["retired"] and int(meta(self.db, "sequence")) >= reg["fence"]:
            self.db.execute("UPDATE meta SET value = ? WHERE key = 'epoch'", (reg["current"],))

    def begin(self):
        """A write transaction on a store the registry vouches for: (registry, epoch)."""
        self.db.execute("BEGIN IMMEDIATE")
        reg = read_epochs(self.epochs_path)  # read under the lock: its fence covers every commit seen
        self.adopt(reg)
        if not self.fenced(reg):
            # A store restored from a backup, or an epoch change interrupted:
            # it cannot prove what it holds.
            self.rollback()
            raise Failure("store is behind its epoch registry")
        return reg, reg["current"]

    def fence(self, epoch, sequence):
        """Raise the registry's fence to a committed sequence (never lower it)."""
        with registry_lock(self.epochs_path):
            reg = read_epochs(self.epochs_path)
            if reg["current"] == epoch and reg["fence"] < sequence:
                reg["fence"] = sequence
                write_epochs(self.epochs_path, reg)

    def next_sequence(self):
        seq = int(meta(self.db, "sequence")) + 1
        self.db.execute("UPDATE meta SET value = ? WHERE key = 'sequence'", (str(seq),))
        return seq

    def policy_state(self, policy_sha256):
        """(event, receipt digest) of the policy's latest event, or None."""
        return self.db.execute("SELECT event, receipt_sha256 FROM policy_events WHERE policy_sha256 = ? "
                               "ORDER BY sequence DESC LIMIT 1", (policy_sha256,)).fetchone()

    def policy_event(self, policy_sha256, event, epoch):
        """Append a policy event to the order, in the caller's transaction:
        (sequence, receipt digest)."""
        seq = self.next_sequence()
        receipt = {"schema_version": DOMAIN_POLICY_RECEIPT, "policy_event": event, "policy_sha256": policy_sha256,
                   "sequence": "uint:%d" % seq, "epoch": epoch, "decided_at": clock()}
        receipt_sha256 = digest(DOMAIN_POLICY_RECEIPT, canonical(receipt))
        self.db.execute("INSERT INTO policy_events VALUES (?,?,?,?,?)",
                        (seq, policy_sha256, event, receipt_sha256, canonical(receipt)))
        return seq, receipt_sha256

    def authenticate(self, presentation, op, subject):
        """(context, policies) of a valid presentation, or (None, reason)."""
        if (not isinstance(presentation, dict) or set(presentation) != {"key_id", "mac"}
                or not all(isinstance(v, str) for v in presentation.values())):
            return None, "malformed"
        row = self.db.execute("SELECT key, tenant, subject, policies FROM credentials WHERE key_id = ?",
                              (presentation["key_id"],)).fetchone()
        if row is None:
            return None, "untrusted_issuer"
        if not hmac.compare_digest(presentation_mac(bytes.fromhex(row[0]), op, subject), presentation["mac"]):
            return None, "sender_authentication_failed"
        context = digest(DOMAIN_CONTEXT, canonical({"sender": presentation["key_id"], "subject": row[2], "tenant": row[1]}))
        return (context, json.loads(row[3])), ""

    def projection(self, row):
        (epoch, context, effect_id, authorization_id, binding_sha256, decision, reason, sequence,
         policy_receipt, receipt_sha256) = row[:10]
        p = {
            "schema_version": PROJECTION_SCHEMA,
            "provider_ref_sha256": ref("provider", self.provider_id),
            "epoch_sha256": ref("epoch", self.provider_id, epoch),
            "effect_id_sha256": ref("effect", self.provider_id, epoch, context, effect_id),
            "authorization_id_sha256": ref("authorization", self.provider_id, epoch, context, authorization_id),
            "binding_sha256": binding_sha256,
            "decision": decision,
            "sequence": "uint:%d" % sequence,
            "receipt_sha256": receipt_sha256,
        }
        if reason:
            p["reason"] = reason
        if policy_receipt:
            p["policy_order_receipt_sha256"] = policy_receipt
        return p

    def lookup(self, epoch, context, b):
        q = "SELECT " + DECISION_COLUMNS + " FROM decisions WHERE epoch = ? AND context = ? AND "
        by_effect = self.db.execute(q + "effect_id = ?", (epoch, context, b["effect_id"])).fetchone()
        by_auth = self.db.execute(q + "authorization_id = ?", (epoch, context, b["authorization_id"])).fetchone()
        return by_effect, by_auth

    def decided(self, row, kind):
        """The answer for a stored decision: terminal (a replay) or found."""
        answer = {"kind": kind, "projection": self.projection(row)}
        if kind == "terminal":
            answer["replay"] = True
        if row[11] is None:  # compacted: the decision stands, its result is gone
            if kind == "terminal":
                answer["reason"] = "compacted"
            else:
                answer["kind"] = "tombstone"
        elif row[12] is not None:
            answer["result"] = json.loads(row[12])
        return answer

    # -- operations

    def profile(self):
        reg, _ = self.begin()
        self.db.execute("COMMIT")
        return {"kind": "profile", "provider_id": self.provider_id, "epoch": reg["current"],
                "guarantees": GUARANTEES, "retention_seconds": self.retention, "readback": True}

    def accept(self, b, arguments, presentation):
        at("accept.start")
        # Everything that can refuse the presentation comes before the
        # transaction: a refused presentation reserves nothing.
        if not well_formed_binding(b):
            return {"kind": "presentation_rejected", "reason": "malformed"}
        cred, reason = self.authenticate(presentation, "accept", b["binding_sha256"])
        if cred is None:
            return {"kind": "presentation_rejected", "reason": reason}
        context, policies = cred
        if b.get("policy_sha256", "") not in policies:
            # The grant was not issued to this caller.
            return {"kind": "presentation_rejected", "reason": "sender_authentication_failed"}
        note = note_of(arguments)
        if note is None:
            return {"kind": "presentation_rejected", "reason": "malformed"}
        # The binding of the values this store will apply, for the
        # capability and acceptance it serves.
        if (request_digest(b["call_id"], b["capability"], {"title": note[0], "body": note[1]}) != b["request_sha256"]
                or not binding_verified(b, self.provider_id)
                or self.capabilities.get(b["capability"]) != b["acceptance"]):
            return {"kind": "presentation_rejected", "reason": "binding_mismatch"}

        reg, epoch = self.begin()
        try:
            at("accept.begin")
            if b.get("provider_epoch", "") != epoch:
                self.rollback()
                return {"kind": "epoch_rejected",
                        "reason": "epoch_retired" if b.get("provider_epoch", "") in reg["retired"] else "epoch_unknown"}
            by_effect, by_auth = self.lookup(epoch, context, b)
            if by_effect is not None and by_effect[4] == b["binding_sha256"]:
                self.rollback()
                return self.decided(by_effect, "terminal")
            if by_effect is not None or by_auth is not None:
                self.rollback()
                return {"kind": "conflict",
                        "reason": "effect_identity_reused" if by_effect is not None else "authorization_identity_reused"}

            seq = self.next_sequence()
            at("accept.reserved")
            # The policy as of this place in the order: its latest event.
            policy = self.policy_state(b.get("policy_sha256", ""))
            policy_receipt = "" if policy is None else policy[1]
            now = clock()
            receipt = {"schema_version": DOMAIN_DECISION_RECEIPT, "binding": b, "context": context,
                       "sequence": "uint:%d" % seq, "epoch": epoch, "decided_at": now,
                       "policy_order_receipt_sha256": policy_receipt}
            result = None
            if policy is None or policy[0] == "revoked":
                decision, reason = "rejected", "revoked" if policy is not None else "policy_denied"
            elif note[0].startswith(DENIED_PREFIX):
                decision, reason = "rejected", "policy_denied"
            else:
                decision, reason = self.publish(note, b["effect_id"]), ""
                result = {"title": note[0], "revision": self.revision(note[0]), "changed": decision == "committed"}
                receipt["external_object_ref_sha256"] = plain_digest("note:" + note[0])
                receipt["result_sha256"] = plain_digest(canonical(result))
            at("accept.applied")
            receipt["authorization_disposition"] = "terminally_denied" if decision == "rejected" else "consumed"
            receipt["decision"] = decision
            if reason:
                receipt["reason"] = reason
            receipt_sha256 = digest(DOMAIN_DECISION_RECEIPT, canonical(receipt))
            row = (epoch, context, b["effect_id"], b["authorization_id"], b["binding_sha256"], decision, reason, seq,
                   policy_receipt, receipt_sha256, now, canonical(receipt),
                   None if result is None else canonical(result))
            self.db.execute("INSERT INTO decisions VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)", row)
            at("accept.recorded")
            self.db.execute("COMMIT")
        finally:
            self.rollback()
        at("accept.committed")
        self.fence(epoch, seq)
        at("accept.fenced")
        answer = self.decided(row, "terminal")
        answer["replay"] = False
        at("accept.returned")
        return answer

    def publish(self, note, effect_id):
        title, body = note
        row = self.db.execute("SELECT body FROM notes WHERE title = ?", (title,)).fetchone()
        if row is not None and row[0] == body:
            return "no_change"
        if row is None:
            self.db.execute("INSERT INTO notes VALUES (?, ?, 1, ?)", (title, body, effect_id))
        else:
            self.db.execute("UPDATE notes SET body = ?, revision = revision + 1, effect_id = ? WHERE title = ?",
                            (body, effect_id, title))
        return "committed"

    def revision(self, title):
        return self.db.execute("SELECT revision FROM notes WHERE title = ?", (title,)).fetchone()[0]

    def query(self, b, presentation):
        at("query.start")
        if not well_formed_binding(b) or not binding_verified(b, self.provider_id):
            return {"kind": "unavailable", "reason": "binding_mismatch"}
        cred, reason = self.authenticate(presentation, "query", b["binding_sha256"])
        if cred is None:
            return {"kind": "unavailable", "reason": reason}
        context, policies = cred
        if b.get("policy_sha256", "") not in policies:
            return {"kind": "unavailable", "reason": "sender_authentication_failed"}
        reg, epoch = self.begin()  # the write lock: this read is linearised with every decision
        try:
            if b.get("provider_epoch", "") != epoch:
                return {"kind": "epoch_retired",
                        "reason": "epoch_retired" if b.get("provider_epoch", "") in reg["retired"] else "epoch_unknown"}
            by_effect, by_auth = self.lookup(epoch, context, b)
            if by_effect is not None and by_effect[4] == b["binding_sha256"]:
                return self.decided(by_effect, "found")
            if by_effect is not None or by_auth is not None:
                return {"kind": "unavailable", "reason": "identity_conflict"}
            observed = int(meta(self.db, "sequence"))
            witness = digest(DOMAIN_ABSENCE, canonical({
                "binding_sha256": b["binding_sha256"], "context": context, "epoch": epoch,
                "observed_sequence": "uint:%d" % observed, "provider_id": self.provider_id}))
            return {"kind": "absent", "absence_sha256": witness}
        finally:
            self.rollback()

    def revoke(self, policy_sha256, presentation):
        at("revoke.start")
        if not is_digest(policy_sha256):
            raise Failure("not a policy digest")
        cred, reason = self.authenticate(presentation, "revoke", policy_sha256)
        if cred is None or policy_sha256 not in cred[1]:
            raise Failure("the caller may not revoke this policy")
        _, epoch = self.begin()
        seq = None
        try:
            at("revoke.begin")
            state = self.policy_state(policy_sha256)
            if state is not None and state[0] == "revoked":
                receipt_sha256 = state[1]  # revoking again: the first revocation
            else:
                seq, receipt_sha256 = self.policy_event(policy_sha256, "revoked", epoch)
            self.db.execute("COMMIT")
        finally:
            self.rollback()
        at("revoke.committed")
        if seq is not None:
            self.fence(epoch, seq)
        return {"kind": "revoked", "policy_order_receipt_sha256": receipt_sha256}


def note_of(arguments):
    """The (title, body) the arguments publish, or None."""
    if not isinstance(arguments, dict) or set(arguments) != {"title", "body"}:
        return None
    title, body = arguments["title"], arguments["body"]
    if not isinstance(title, str) or not isinstance(body, str):
        return None
    if not 0 < len(title) <= MAX_TITLE_CHARS or len(body) > MAX_BODY_CHARS:
        return None
    return title, body


def is_digest(s):
    return (isinstance(s, str) and s.startswith("sha256:") and len(s) == 71
            and all(c in "0123456789abcdef" for c in s[7:]))


def clock():
    now = os.environ.get("NOTES_PROVIDER_NOW")
    return int(now) if now else int(time.time())


# ---------------------------------------------------------------- commands

REQUEST_MEMBERS = {
    "profile": [{"protocol", "op"}],
    "accept": [{"protocol", "op", "binding", "arguments"}, {"protocol", "op", "binding", "arguments", "presentation"}],
    "query": [{"protocol", "op", "binding"}, {"protocol", "op", "binding", "presentation"}],
    "revoke": [{"protocol", "op", "policy_sha256"}, {"protocol", "op", "policy_sha256", "presentation"}],
}


def serve(args):
    data = sys.stdin.buffer.read(MAX_REQUEST_BYTES + 1)
    if len(data) > MAX_REQUEST_BYTES:
        raise Failure("request too large")
    try:
        req = parse_strict(data)
    except (ValueError, OverflowError) as e:
        raise Failure("request is not strict JSON") from e
    if (not isinstance(req, dict) or req.get("protocol") != PROTOCOL
            or set(req) not in REQUEST_MEMBERS.get(req.get("op"), [])):
        raise Failure("not a provider protocol request")
    store = Store(args.db, args.epoch_file)
    op = req["op"]
    if op == "profile":
        answer = store.profile()
    elif op == "accept":
        answer = store.accept(req["binding"], req["arguments"], req.get("presentation"))
    elif op == "query":
        answer = store.query(req["binding"], req.get("presentation"))
    else:
        answer = store.revoke(req["policy_sha256"], req.get("presentation"))
    answer["protocol"] = PROTOCOL
    sys.stdout.buffer.write(canonical(answer).encode("utf-8"))
    sys.stdout.buffer.flush()


def init(args):
    if os.path.exists(args.db) or os.path.exists(args.epoch_file):
        raise Failure("store or epoch registry exists")
    capabilities = {}
    for c in args.capability or ["notes.publish=strict"]:
        name, _, mode = c.partition("=")
        if not name or mode not in ACCEPTANCE_MODES:
            raise Failure("--capability NAME=strict|no_blind_retry|off")
        capabilities[name] = mode
    write_epochs(args.epoch_file, {"schema": EPOCHS_SCHEMA, "current": args.epoch, "retired": [], "fence": 0})
    db = connect(args.db, create=True)
    db.execute("BEGIN IMMEDIATE")
    for statement in SCHEMA.split(";"):
        db.execute(statement)
    for k, v in [("provider_id", args.provider_id), ("epoch", args.epoch), ("sequence", "0"),
                 ("retention_seconds", str(args.retention_seconds)), ("capabilities", canonical(capabilities))]:
        db.execute("INSERT INTO meta VALUES (?, ?)", (k, v))
    db.execute("COMMIT")


def issue(args):
    """Issue a credential: a new key (written to --key-file only), its tenant,
    subject and the grants it may present."""
    if not all(is_digest(p) for p in args.policy):
        raise Failure("--policy takes grant digests")
    key = secrets.token_bytes(32)
    key_id = hmac.new(key, KEY_ID_LABEL, hashlib.sha256).hexdigest()
    fd = os.open(args.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")
    store = Store(args.db, args.epoch_file)
    _, epoch = store.begin()
    seq = None
    try:
        store.db.execute("INSERT INTO credentials VALUES (?, ?, ?, ?, ?)",
                         (key_id, key.hex(), args.tenant, args.subject, canonical(sorted(set(args.policy)))))
        # A grant is activated once, in the order; a revoked one stays revoked.
        for policy in sorted(set(args.policy)):
            if store.policy_state(policy) is None:
                seq, _ = store.policy_event(policy, "activated", epoch)
        store.db.execute("COMMIT")
    finally:
        store.rollback()
    if seq is not None:
        store.fence(epoch, seq)
    print(canonical({"key_id": key_id}))


def advance(args):
    """Retire the current epoch: the registry first (it is the fence), then
    the store. Also the way back for a store restored from a backup."""
    db = connect(args.db)
    with registry_lock(args.epoch_file):
        reg = read_epochs(args.epoch_file)
        db.execute("BEGIN IMMEDIATE")
        at("retire.begin")
        sequence = int(meta(db, "sequence"))
        if reg["current"] != args.epoch:
            if args.epoch in reg["retired"]:
                raise Failure("epoch already retired")
            reg = {"schema": EPOCHS_SCHEMA, "current": args.epoch, "retired": reg["retired"] + [reg["current"]],
                   "fence": sequence}
            write_epochs(args.epoch_file, reg)
        at("retire.registered")
        # Finishes an advance interrupted between the two writes, too.
        db.execute("UPDATE meta SET value = ? WHERE key = 'epoch'", (args.epoch,))
        db.execute("COMMIT")
        at("retire.committed")


def compact(args):
    """Receipts older than the retention become tombstones; tombstones of retired epochs go."""
    store = Store(args.db, args.epoch_file)
    reg, _ = store.begin()
    at("compact.begin")
    cut = args.now - store.retention
    n = store.db.execute("UPDATE decisions SET receipt = NULL, result = NULL "
                         "WHERE receipt IS NOT NULL AND decided_at <= ?", (cut,)).rowcount
    gone = 0
    for epoch in reg["retired"]:
        gone += store.db.execute("DELETE FROM decisions WHERE epoch = ? AND receipt IS NULL", (epoch,)).rowcount
    store.db.execute("COMMIT")
    at("compact.committed")
    print(canonical({"compacted": n, "deleted": gone}))


def vectors(args):
    """Check the golden vectors shared with apysup's Go test."""
    with open(args.file, "rb") as f:
        cases = parse_strict(f.read())
    bad = []
    for c in cases:
        b = dict(c["binding"])
        if canonical(c["arguments"]) != c["canonical_arguments"]:
            bad.append(c["name"] + ": canonical arguments")
        b["request_sha256"] = request_digest(b["call_id"], b["capability"], c["arguments"])
        if b["request_sha256"] != c["request_sha256"]:
            bad.append(c["name"] + ": request_sha256")
        if canonical(binding_document(b)) != c["canonical_binding_document"]:
            bad.append(c["name"] + ": binding document")
        if seal(b) != (c["effect_id"], c["authorization_id"], c["binding_sha256"]):
            bad.append(c["name"] + ": identities")
    print(canonical({"checked": len(cases), "failed": bad}))
    if bad:
        sys.exit(1)


def main():
    ap = argparse.ArgumentParser(description="a strict provider for apysup's exec handler")
    sub = ap.add_subparsers(dest="command", required=True)
    for name in ["init", "issue", "serve", "advance", "compact"]:
        p = sub.add_parser(name)
        p.add_argument("--db", required=True)
        p.add_argument("--epoch-file", required=True)
        if name == "init":
            p.add_argument("--provider-id", required=True)
            p.add_argument("--retention-seconds", type=int, default=7 * 24 * 3600)
            p.add_argument("--capability", action="append")
        if name in ("init", "advance"):
            p.add_argument("--epoch", required=True)
        if name == "issue":
            p.add_argument("--tenant", required=True)
            p.add_argument("--subject", required=True)
            p.add_argument("--policy", action="append", required=True)
            p.add_argument("--key-file", required=True)
        if name == "compact":
            p.add_argument("--now", type=int, required=True)
    sub.add_parser("vectors").add_argument("file")
    args = ap.parse_args()
    commands = {"init": init, "issue": issue, "serve": serve, "advance": advance, "compact": compact, "vectors": vectors}
    try:
        commands[args.command](args)
    except (Failure, sqlite3.Error, OSError) as e:
        print("notes_provider: " + type(e).__name__ + ": " + str(e), file=sys.stderr)
        sys.exit(EXIT_FAILED)


if __name__ == "__main__":
    main()
