-- The migration runner's own statements (named blocks, as in queries.sql). They are kept apart
-- from queries.sql because they run before any migration and include DDL, which cannot be
-- PREPAREd like the store's queries.

-- name: migration_lock
SELECT pg_advisory_lock(%s, %s);

-- name: migration_unlock
SELECT pg_advisory_unlock(%s, %s);

-- name: migrations_table
CREATE TABLE IF NOT EXISTS schema_migrations (
    version integer PRIMARY KEY,
    name text NOT NULL,
    applied_at double precision NOT NULL
);

-- name: migrations_applied
SELECT version FROM schema_migrations;

-- name: migration_record
INSERT INTO schema_migrations (version, name, applied_at) VALUES (%s, %s, %s);

-- name: schema_tables
-- Which of the store's own tables exist (fleet ledger verify: a database without them is no store).
SELECT c.relname FROM pg_class c
WHERE c.relkind IN ('r', 'p') AND c.relname IN ('schema_migrations', 'ledger')
  AND pg_table_is_visible(c.oid);
