-- The fleet store, PostgreSQL dialect: the current schema, in the files of schema/ in their order
-- (migrations/ must produce exactly their whole). This one: the leases and their fences.
-- Times are UNIX epoch seconds (double precision) from the server clock where it matters
-- (leases, queue), so machines with skewed clocks agree. JSON is canonical text.

CREATE FUNCTION fleet_now() RETURNS double precision
LANGUAGE sql VOLATILE AS $$ SELECT extract(epoch FROM clock_timestamp())::double precision $$;

-- Every symbol that contains p_symbol, outermost first: a.py, a.py::Foo, a.py::Foo.bar, ...
CREATE FUNCTION fleet_ancestors(p_symbol text) RETURNS text[]
LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
    v_pos int := strpos(p_symbol, '::');
    v_path text;
    v_parts text[];
    v_out text[] := '{}';
BEGIN
    IF v_pos = 0 THEN
        RETURN v_out;
    END IF;
    v_path := left(p_symbol, v_pos - 1);
    v_out := ARRAY[v_path];
    v_parts := string_to_array(substr(p_symbol, v_pos + 2), '.');
    FOR i IN 1 .. coalesce(array_length(v_parts, 1), 0) - 1 LOOP
        v_out := v_out || (v_path || '::' || array_to_string(v_parts[1:i], '.'));
    END LOOP;
    RETURN v_out;
END $$;

-- [lo, hi) in bytewise order covering exactly the symbols inside p_symbol.
CREATE FUNCTION fleet_descendant_lo(p_symbol text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN strpos(p_symbol, '::') > 0 THEN p_symbol || '.' ELSE p_symbol || '::' END
$$;
CREATE FUNCTION fleet_descendant_hi(p_symbol text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN strpos(p_symbol, '::') > 0 THEN p_symbol || '/' ELSE p_symbol || ':;' END
$$;

CREATE SEQUENCE fleet_fence_seq;

CREATE TABLE leases (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    symbol text COLLATE "C" NOT NULL,
    mode text NOT NULL CHECK (mode IN ('read', 'write')),
    holder text NOT NULL,
    unit text NOT NULL,
    token bigint NOT NULL,
    granted_at double precision NOT NULL,
    expires_at double precision NOT NULL
);
CREATE INDEX leases_symbol ON leases (symbol);
CREATE INDEX leases_holder ON leases (holder);

CREATE TABLE lease_fences (
    symbol text COLLATE "C" PRIMARY KEY,
    token bigint NOT NULL,
    write_token bigint NOT NULL DEFAULT 0
);

-- The durable epoch (one row). Tokens are (epoch << 40) + nextval('fleet_fence_seq'). Tokens
-- below crash_floor were issued before the last crash recovery.
CREATE TABLE lease_epoch (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    epoch bigint NOT NULL,
    crash_floor bigint NOT NULL
);
-- The epoch in force since the last crash recovery. UNLOGGED: crash recovery (and a restored
-- base backup or a promoted standby) starts it empty, a clean restart keeps it.
CREATE UNLOGGED TABLE lease_epoch_live (
    id boolean PRIMARY KEY DEFAULT true CHECK (id),
    epoch bigint NOT NULL
);
-- Epoch 1: tokens start at 2^40, above the plain sequence values issued before migration 0003.
INSERT INTO lease_epoch (epoch, crash_floor) VALUES (1, 0);
INSERT INTO lease_epoch_live (epoch) VALUES (1);

-- The epoch of this server life. The first call after a crash recovery (lease_epoch_live empty)
-- advances the durable epoch and commits its transaction synchronously, so the new epoch is on
-- disk before any other transaction can see it and before any token of it reaches a client.
CREATE FUNCTION fleet_lease_epoch() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    v_epoch bigint;
BEGIN
    SELECT e.epoch INTO v_epoch FROM lease_epoch_live e;
    IF FOUND THEN
        RETURN v_epoch;
    END IF;
    PERFORM set_config('synchronous_commit', 'on', true);
    PERFORM 1 FROM lease_epoch FOR UPDATE;  -- one advance at a time
    SELECT e.epoch INTO v_epoch FROM lease_epoch_live e;  -- advanced while we waited?
    IF FOUND THEN
        RETURN v_epoch;
    END IF;
    UPDATE lease_epoch SET epoch = epoch + 1, crash_floor = (epoch + 1) << 40
    RETURNING epoch INTO v_epoch;
    INSERT INTO lease_epoch_live (epoch) VALUES (v_epoch);
    RETURN v_epoch;
END $$;

-- Tokens below this were issued before the last crash recovery: check_fence accepts such a
-- token only while its lease is live (a grant lost in the crash is never live again). Before the
-- first acquisition after a crash has advanced the epoch, every token issued so far is below it.
CREATE FUNCTION fleet_lease_crash_floor() RETURNS bigint
LANGUAGE sql STABLE AS $$
    SELECT CASE WHEN EXISTS (SELECT 1 FROM lease_epoch_live) THEN e.crash_floor
                ELSE (e.epoch + 1) << 40 END
    FROM lease_epoch e
$$;

-- All-or-nothing acquisition of a normalized request set (one row per symbol, sorted).
-- Concurrency: multi-granularity advisory locks, exclusive on each requested symbol, shared on
-- each of its ancestors, tried without waiting: two requests that can conflict
-- (equal symbols, or one inside the other) never run at once, so each conflict check sees the
-- other's committed leases; when a lock is busy the call returns one row with ok = false and a
-- NULL holder ("contended") instead of queueing behind it, so nothing waits and nothing
-- deadlocks. Expired leases are ignored; an expired conflicting lease is deleted under its row
-- lock (in id order) so that a heartbeat renewing it concurrently either wins (and the lease
-- blocks us) or loses (and is gone). The grant commits asynchronously (this transaction only;
-- one in four synchronously, see the end): its token carries the epoch of this server life,
-- so a grant lost in a crash never has its token issued again and check_fence refuses it
-- (docs/store.md). A fence's write_token is the first token of the acquisition that wrote, so
-- the grants of one call (a.py::C with a.py::C.m) never fence each other off. Its statements
-- are planned once per connection (generic plans) with sequential scans and JIT off, so they
-- stay index probes however small the table looked when they were planned (docs/store.md,
-- "Plans that stay index probes").
-- Returns the grants (ok = true), or the blocking leases (ok = false) and grants nothing.
CREATE FUNCTION fleet_lease_acquire(
    p_holder text, p_unit text, p_symbols text[], p_modes text[], p_ttl double precision
) RETURNS TABLE (
    ok boolean, id bigint, symbol text, mode text, holder text, token bigint,
    expires_at double precision
)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET jit = off
AS $$
#variable_conflict use_column
DECLARE
    v_ok boolean;
    v_a text;
    v_now double precision;
    v_n int := coalesce(array_length(p_symbols, 1), 0);
    v_blocked boolean := false;
    v_live int;
    v_expired int;
    v_epoch bigint;
    v_seq bigint;
    v_token bigint;
    v_base bigint;  -- the first token of this acquisition
    v_anc text[];
    v_lo text;
    v_hi text;
BEGIN
    -- Try-locks never wait, so their order cannot deadlock, and a backend's own shared lock
    -- never blocks its own exclusive one: no sorting or merging of the lock plan is needed.
    FOR i IN 1 .. v_n LOOP
        v_ok := pg_try_advisory_xact_lock(hashtextextended(p_symbols[i], 0));
        IF v_ok THEN
            v_anc := fleet_ancestors(p_symbols[i]);
            FOREACH v_a IN ARRAY v_anc LOOP
                v_ok := pg_try_advisory_xact_lock_shared(hashtextextended(v_a, 0));
                EXIT WHEN NOT v_ok;
            END LOOP;
        END IF;
        IF NOT v_ok THEN
            -- an overlapping acquisition is in flight: refuse now, never wait (the caller's
            -- backoff retries); no lease was granted yet
            RETURN QUERY SELECT false, NULL::bigint, NULL::text, NULL::text, NULL::text,
                NULL::bigint, NULL::double precision;
            RETURN;
        END IF;
    END LOOP;
    v_now := fleet_now();
    FOR i IN 1 .. v_n LOOP
        IF v_n > 1 THEN  -- one symbol: its ancestors are still in v_anc from the lock loop
            v_anc := fleet_ancestors(p_symbols[i]);
        END IF;
        v_lo := fleet_descendant_lo(p_symbols[i]);
        v_hi := fleet_descendant_hi(p_symbols[i]);
        SELECT count(*) FILTER (WHERE l.expires_at > v_now),
               count(*) FILTER (WHERE l.expires_at <= v_now)
        INTO v_live, v_expired
        FROM leases l
        WHERE l.holder <> p_holder
          AND (p_modes[i] = 'write' OR l.mode = 'write')
          AND (l.symbol = p_symbols[i] OR l.symbol = ANY (v_anc)
               OR (l.symbol >= v_lo AND l.symbol < v_hi));
        IF v_expired > 0 AND v_live = 0 AND NOT v_blocked THEN
            -- Under the row locks (id order), a concurrent renewal either already extended a
            -- lease (not deleted: it blocks us below) or finds it gone.
            DELETE FROM leases d WHERE d.id IN (
                SELECT l.id FROM leases l
                WHERE l.expires_at <= v_now
                  AND (l.symbol = p_symbols[i] OR l.symbol = ANY (v_anc)
                       OR (l.symbol >= v_lo AND l.symbol < v_hi))
                ORDER BY l.id FOR UPDATE);
            v_live := 1;  -- look again: a renewed lease blocks
        END IF;
        IF v_live > 0 THEN
            RETURN QUERY
                SELECT false, l.id, l.symbol::text, l.mode, l.holder, l.token, l.expires_at
                FROM leases l
                WHERE l.expires_at > v_now AND l.holder <> p_holder
                  AND (p_modes[i] = 'write' OR l.mode = 'write')
                  AND (l.symbol = p_symbols[i] OR l.symbol = ANY (v_anc)
                       OR (l.symbol >= v_lo AND l.symbol < v_hi));
            IF FOUND THEN
                v_blocked := true;
            END IF;
        END IF;
    END LOOP;
    IF v_blocked THEN
        RETURN;
    END IF;
    PERFORM set_config('synchronous_commit', 'off', true);
    SELECT e.epoch INTO v_epoch FROM lease_epoch_live e;
    IF NOT FOUND THEN
        v_epoch := fleet_lease_epoch();  -- after the line above: the advance commits durably
    END IF;
    FOR i IN 1 .. v_n LOOP
        v_seq := nextval('fleet_fence_seq');
        IF v_seq >= (1::bigint << 40) THEN
            RAISE EXCEPTION 'fleet_fence_seq passed 2^40';
        END IF;
        v_token := (v_epoch << 40) + v_seq;
        v_base := coalesce(v_base, v_token);
        RETURN QUERY
            -- The fence: an UPDATE (a HOT update: no index entry), or an INSERT the first time
            -- the symbol is leased. No other call writes this symbol's fence meanwhile: this
            -- one holds the symbol's exclusive advisory lock.
            WITH fenced AS (
                UPDATE lease_fences AS f SET
                    token = greatest(f.token, v_token),
                    write_token = CASE WHEN p_modes[i] = 'write'
                                       THEN greatest(f.write_token, v_base)
                                       ELSE f.write_token END
                WHERE f.symbol = p_symbols[i]
                RETURNING f.symbol
            ), first_fence AS (
                INSERT INTO lease_fences (symbol, token, write_token)
                SELECT p_symbols[i], v_token,
                       CASE WHEN p_modes[i] = 'write' THEN v_base ELSE 0 END
                WHERE NOT EXISTS (SELECT FROM fenced)
            )
            INSERT INTO leases AS l (symbol, mode, holder, unit, token, granted_at, expires_at)
            VALUES (p_symbols[i], p_modes[i], p_holder, p_unit, v_token, v_now, v_now + p_ttl)
            RETURNING true, l.id, l.symbol::text, l.mode, l.holder, l.token, l.expires_at;
    END LOOP;
    -- Every fourth acquisition commits synchronously. The server wakes its WAL writer on every
    -- asynchronous commit while a whole WAL page is written but not yet flushed (PostgreSQL 15,
    -- XLogSetAsyncXactLSN), and with default settings the WAL writer flushes only every 200 ms
    -- or 1 MB: without this, nearly every grant and release sent it a signal and woke it. One
    -- flush every four grants keeps the flushed position within a page of the end of the WAL
    -- (docs/store.md, "WAL-writer wake-ups"). A synchronous commit only adds durability.
    IF v_seq % 4 = 0 THEN
        PERFORM set_config('synchronous_commit', 'on', true);
    END IF;
END $$;

-- Release leases of p_holder: those whose id is in p_ids, or all of them when p_ids is NULL;
-- returns how many were deleted. One lease is deleted by its key; several are row-locked in id
-- order first (as renew and the expiry in fleet_lease_acquire lock), so nothing deadlocks.
-- The release commits asynchronously (synchronous_commit off for this transaction only): its
-- commit record is in the WAL before that of any transaction that saw the lease gone, so a
-- server crash can lose a release only when nothing that depended on it survived: after
-- recovery the lease is back, as it really was held, until its TTL expires. Fencing tokens and
-- fences are never touched here. Sequential scans and JIT are off as in fleet_lease_acquire.
-- See docs/store.md, "Asynchronous grants and releases".
CREATE FUNCTION fleet_lease_release(p_holder text, p_ids bigint[]) RETURNS integer
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
SET jit = off
AS $$
DECLARE
    v_count integer;
BEGIN
    PERFORM set_config('synchronous_commit', 'off', true);
    IF p_ids IS NULL THEN
        DELETE FROM leases WHERE leases.id IN (
            SELECT l.id FROM leases l WHERE l.holder = p_holder ORDER BY l.id FOR UPDATE);
    ELSIF cardinality(p_ids) = 1 THEN
        DELETE FROM leases WHERE leases.id = p_ids[1] AND leases.holder = p_holder;
    ELSE
        DELETE FROM leases WHERE leases.id IN (
            SELECT l.id FROM leases l WHERE l.id = ANY (p_ids) AND l.holder = p_holder
            ORDER BY l.id FOR UPDATE);
    END IF;
    GET DIAGNOSTICS v_count = ROW_COUNT;
    RETURN v_count;
END $$;
