-- Ledger events carry their repository in a column (a work unit's `unit.planned` event above
-- all: the unit belongs to that repository), '' for an event of no repository (the kill switch,
-- tokens). It is the payload's "repository" field, which the event's hash covers: `fleet ledger
-- verify` reports a column that disagrees with it. Rows from before take it from their payload.
-- The table is rebuilt (SQLite's ADD COLUMN would leave its CREATE text unlike schema.sql); the
-- append-only triggers refuse UPDATE and DELETE, not a rebuild by the migration itself.
DROP TRIGGER ledger_no_update;
DROP TRIGGER ledger_no_delete;
DROP INDEX ledger_unit;
DROP INDEX ledger_campaign;
DROP INDEX ledger_kind;
DROP INDEX ledger_created_at;
ALTER TABLE ledger RENAME TO ledger_before_repo;
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
INSERT INTO ledger (seq, kind, unit, campaign, actor, payload, created_at, prev_hash, hash, repo)
SELECT seq, kind, unit, campaign, actor, payload, created_at, prev_hash, hash,
       CASE WHEN json_valid(payload) AND json_type(payload, '$.repository') = 'text'
            THEN json_extract(payload, '$.repository') ELSE '' END
FROM ledger_before_repo;
DROP TABLE ledger_before_repo;
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
