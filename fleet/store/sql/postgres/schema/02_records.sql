-- The fleet store, PostgreSQL dialect, the current schema after 01_leases.sql: the task queue,
-- the append-only ledger, controls, budgets, notes, the artifact library, findings, changes
-- and API tokens.

CREATE TABLE tasks (
    id text PRIMARY KEY,
    kind text NOT NULL,
    key text NOT NULL,
    payload text NOT NULL,
    status text NOT NULL CHECK (status IN ('queued', 'claimed', 'done', 'failed')),
    attempts integer NOT NULL DEFAULT 0,
    max_attempts integer NOT NULL DEFAULT 3,
    claimed_by text,
    heartbeat_at double precision,
    run_after double precision NOT NULL,
    result text,
    error text,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL
);
CREATE UNIQUE INDEX tasks_live_key ON tasks (kind, key) WHERE status IN ('queued', 'claimed');
CREATE INDEX tasks_ready ON tasks (created_at, id) WHERE status = 'queued';
CREATE INDEX tasks_claimed_by ON tasks (claimed_by) WHERE status = 'claimed';

CREATE TABLE ledger (
    seq bigint PRIMARY KEY,
    kind text NOT NULL,
    unit text,
    campaign text,
    actor text NOT NULL,
    payload text NOT NULL,
    created_at double precision NOT NULL,
    prev_hash text NOT NULL UNIQUE,
    hash text NOT NULL UNIQUE,
    repo text NOT NULL DEFAULT ''
);
CREATE INDEX ledger_unit ON ledger (unit);
CREATE INDEX ledger_repo ON ledger (repo, campaign);
CREATE INDEX ledger_campaign ON ledger (campaign);
CREATE INDEX ledger_kind ON ledger (kind);
CREATE INDEX ledger_created_at ON ledger (created_at);
CREATE FUNCTION fleet_ledger_append_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'fleet ledger is append-only: % refused', TG_OP
        USING ERRCODE = 'integrity_constraint_violation';
END $$;
CREATE TRIGGER ledger_no_update_delete BEFORE UPDATE OR DELETE ON ledger
    FOR EACH ROW EXECUTE FUNCTION fleet_ledger_append_only();
CREATE TRIGGER ledger_no_truncate BEFORE TRUNCATE ON ledger
    FOR EACH STATEMENT EXECUTE FUNCTION fleet_ledger_append_only();

CREATE TABLE controls (
    key text PRIMARY KEY,
    value text NOT NULL,
    updated_at double precision NOT NULL
);

CREATE TABLE budgets (
    scope text PRIMARY KEY,
    usd double precision NOT NULL DEFAULT 0,
    tokens bigint NOT NULL DEFAULT 0,
    updated_at double precision NOT NULL
);

CREATE TABLE notes (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    text text NOT NULL,
    tag text NOT NULL,
    author text NOT NULL,
    created_at double precision NOT NULL
);

CREATE TABLE artifacts (
    hash text PRIMARY KEY,
    size bigint NOT NULL,
    content bytea NOT NULL,
    text text,
    created_at double precision NOT NULL
);

CREATE TABLE artifact_refs (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    hash text NOT NULL REFERENCES artifacts (hash),
    campaign text NOT NULL,
    unit text NOT NULL,
    kind text NOT NULL,
    name text NOT NULL,
    created_at double precision NOT NULL,
    UNIQUE (hash, campaign, unit, kind, name)
);
CREATE INDEX artifact_refs_campaign_unit ON artifact_refs (campaign, unit);

CREATE TABLE findings (
    fingerprint text NOT NULL,
    campaign text NOT NULL,
    rule text NOT NULL,
    symbol text NOT NULL,
    path text NOT NULL,
    line integer NOT NULL,
    status text NOT NULL CHECK (status IN ('new', 'known', 'fixed', 'suppressed')),
    issue_ref text,
    data text NOT NULL,
    first_seen double precision NOT NULL,
    last_seen double precision NOT NULL,
    repo text NOT NULL DEFAULT '',
    PRIMARY KEY (repo, fingerprint)
);
CREATE INDEX findings_campaign_status ON findings (repo, campaign, status);

CREATE TABLE changes (
    number bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    repo text NOT NULL,
    branch text NOT NULL,
    title text NOT NULL,
    body text NOT NULL,
    state text NOT NULL CHECK (state IN ('open', 'merged', 'closed')),
    labels text NOT NULL,
    created_at double precision NOT NULL,
    updated_at double precision NOT NULL,
    UNIQUE (repo, branch)
);

CREATE TABLE api_tokens (
    id text PRIMARY KEY,
    name text NOT NULL,
    secret_hash text NOT NULL,
    scopes text NOT NULL,
    created_at double precision NOT NULL,
    revoked_at double precision
);
