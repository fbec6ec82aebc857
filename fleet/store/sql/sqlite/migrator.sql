-- The migration runner's own statements (named blocks, as in queries.sql), kept apart from
-- queries.sql because they run before any migration and include DDL.

-- name: migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at REAL NOT NULL
);

-- name: migrations_applied
SELECT version FROM schema_migrations;

-- name: migration_record
INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?);

-- name: schema_tables
-- Which of the store's own tables exist (fleet ledger verify: a file without them is no store).
SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('schema_migrations', 'ledger');
