-- Leases: cheaper grants at many processes (docs/store.md, "Server cost per grant").
--
-- 1. The statements of the lease functions stay index probes. Their plans are generic and
--    cached per connection, made once against the table as it looked then: a fresh or
--    just-vacuumed `leases` table looked tiny and the conflict check got a sequential scan,
--    which then read every page of the table, dead tuples included, on every grant until
--    autovacuum came round. Sequential scans are off inside the functions, and JIT with them
--    (a disabled scan that must stay, as on the one-row lease_epoch_live, costs 1e10 and would
--    otherwise be JIT-compiled on every call).
-- 2. Every fourth acquisition commits synchronously, so that the asynchronous commits around it
--    stop waking the WAL writer one by one.

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
CREATE OR REPLACE FUNCTION fleet_lease_acquire(
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

ALTER FUNCTION fleet_lease_release(text, bigint[]) SET enable_seqscan = off;
ALTER FUNCTION fleet_lease_release(text, bigint[]) SET jit = off;
