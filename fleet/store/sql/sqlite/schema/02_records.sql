-- The fleet store, SQLite dialect, the current schema after 01_leases.sql: the task queue,
-- the append-only ledger, controls, budgets, notes, the artifact library, findings, changes
-- and API tokens.

CREATE TABLE tasks (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    payload TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('queued', 'claimed', 'done', 'failed')),
    attempts INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 3,
    claimed_by TEXT,
    heartbeat_at REAL,
    run_after REAL NOT NULL,
    result TEXT,
    error TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE UNIQUE INDEX tasks_live_key ON tasks (kind, key) WHERE status IN ('queued', 'claimed');
CREATE INDEX tasks_ready ON tasks (status, run_after, created_at);
CREATE INDEX tasks_claimed_by ON tasks (claimed_by) WHERE status = 'claimed';

CREATE TABLE ledger (
    seq INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    unit TEXT,
    campaign TEXT,
    actor TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at REAL NOT NULL,
    prev_hash TEXT NOT NULL UNIQUE,
    hash TEXT NOT NULL UNIQUE,
    repo TEXT NOT NULL DEFAULT ''
);
CREATE INDEX ledger_unit ON ledger (unit);
CREATE INDEX ledger_repo ON ledger (repo, campaign);
CREATE INDEX ledger_campaign ON ledger (campaign);
CREATE INDEX ledger_kind ON ledger (kind);
CREATE INDEX ledger_created_at ON ledger (created_at);
CREATE TRIGGER ledger_no_update BEFORE UPDATE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'fleet ledger is append-only: UPDATE refused');
END;
CREATE TRIGGER ledger_no_delete BEFORE DELETE ON ledger
BEGIN
    SELECT RAISE(ABORT, 'fleet ledger is append-only: DELETE refused');
END;

CREATE TABLE controls (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    updated_at REAL NOT NULL
);

CREATE TABLE budgets (
    scope TEXT PRIMARY KEY,
    usd REAL NOT NULL DEFAULT 0,
    tokens INTEGER NOT NULL DEFAULT 0,
    updated_at REAL NOT NULL
);

CREATE TABLE notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    text TEXT NOT NULL,
    tag TEXT NOT NULL,
    author TEXT NOT NULL,
    created_at REAL NOT NULL
);

CREATE TABLE artifacts (
    hash TEXT PRIMARY KEY,
    size INTEGER NOT NULL,
    content BLOB NOT NULL,
    text TEXT,
    created_at REAL NOT NULL
);

CREATE TABLE artifact_refs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    hash TEXT NOT NULL REFERENCES artifacts (hash),
    campaign TEXT NOT NULL,
    unit TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL,
    created_at REAL NOT NULL,
    UNIQUE (hash, campaign, unit, kind, name)
);
CREATE INDEX artifact_refs_campaign_unit ON artifact_refs (campaign, unit);

CREATE TABLE findings (
    repo TEXT NOT NULL DEFAULT '',
    fingerprint TEXT NOT NULL,
    campaign TEXT NOT NULL,
    rule TEXT NOT NULL,
    symbol TEXT NOT NULL,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('new', 'known', 'fixed', 'suppressed')),
    issue_ref TEXT,
    data TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    PRIMARY KEY (repo, fingerprint)
);
CREATE INDEX findings_campaign_status ON findings (repo, campaign, status);

CREATE TABLE changes (
    number INTEGER PRIMARY KEY AUTOINCREMENT,
    repo TEXT NOT NULL,
    branch TEXT NOT NULL,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
    labels TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    UNIQUE (repo, branch)
);

CREATE TABLE api_tokens (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    secret_hash TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at REAL NOT NULL,
    revoked_at REAL
);
