-- The fleet store, SQLite dialect: the current schema, in the files of schema/ in their order
-- (migrations/ must produce exactly their whole). This one: the leases and their fences.
-- Times are UNIX epoch seconds (REAL); JSON is canonical text.

CREATE TABLE leases (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    symbol TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('read', 'write')),
    holder TEXT NOT NULL,
    unit TEXT NOT NULL,
    token INTEGER NOT NULL,
    granted_at REAL NOT NULL,
    expires_at REAL NOT NULL
);
CREATE INDEX leases_symbol ON leases (symbol);
CREATE INDEX leases_holder ON leases (holder);

CREATE TABLE lease_fences (
    symbol TEXT PRIMARY KEY,
    token INTEGER NOT NULL,
    write_token INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE fence_counter (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    value INTEGER NOT NULL
);
INSERT INTO fence_counter (id, value) VALUES (1, 0);
