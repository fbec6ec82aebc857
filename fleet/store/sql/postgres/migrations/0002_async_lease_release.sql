-- Leases: release in one server call that commits asynchronously (see fleet_lease_release).

-- Release leases of p_holder: those whose id is in p_ids, or all of them when p_ids is NULL;
-- returns how many were deleted. One lease is deleted by its key; several are row-locked in id
-- order first (as renew and the expiry in fleet_lease_acquire lock), so nothing deadlocks.
-- The release commits asynchronously (synchronous_commit off for this transaction only): its
-- commit record is in the WAL before any transaction that sees the lease gone can commit, and
-- every acquisition commits synchronously, flushing the WAL up to and including that record. So
-- a server crash can lose a release only when nothing that depended on it survived: after
-- recovery the lease is back, as it really was held, until its TTL expires. Fencing tokens and
-- fences are never touched here. See docs/store.md, "Asynchronous release".
CREATE FUNCTION fleet_lease_release(p_holder text, p_ids bigint[]) RETURNS integer
LANGUAGE plpgsql AS $$
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
