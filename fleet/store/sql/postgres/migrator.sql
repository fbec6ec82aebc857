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
