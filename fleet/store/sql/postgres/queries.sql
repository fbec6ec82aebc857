-- Named queries of the PostgreSQL store (psycopg 3, %(name)s parameters). Leases and the queue
-- use the server clock (fleet_now()); lists are arrays.

-- ---------------------------------------------------------------- leases
-- name: lease_acquire
-- symbols and modes are each one text, the items joined by the unit separator (0x1f)
SELECT ok, id, symbol, mode, holder, token, expires_at
FROM fleet_lease_acquire(%(holder)s::text, %(unit)s::text,
                         string_to_array(%(symbols)s::text, E'\x1f'),
                         string_to_array(%(modes)s::text, E'\x1f'),
                         %(ttl)s::double precision);

-- name: fence_state
SELECT
    (SELECT token FROM lease_fences WHERE symbol = %(symbol)s) AS token,
    (SELECT max(write_token) FROM lease_fences
     WHERE symbol = %(symbol)s
        OR symbol = ANY (fleet_ancestors(%(symbol)s))
        OR (symbol >= fleet_descendant_lo(%(symbol)s)
            AND symbol < fleet_descendant_hi(%(symbol)s))) AS write_token,
    -- a token issued before the last crash recovery counts only while its lease is live
    (%(token)s::bigint >= fleet_lease_crash_floor()
     OR EXISTS (SELECT 1 FROM leases
                WHERE symbol = %(symbol)s AND token = %(token)s::bigint
                  AND expires_at > fleet_now())) AS this_life;

-- name: lease_renew
UPDATE leases SET expires_at = fleet_now() + %(ttl)s
WHERE id IN (SELECT id FROM leases
             WHERE holder = %(holder)s AND expires_at > fleet_now()
             ORDER BY id FOR UPDATE);

-- name: lease_release
SELECT fleet_lease_release(%(holder)s, NULL) AS n;

-- name: lease_release_ids
-- ids is one text, the lease ids joined by commas. fleet_lease_release locks several rows in id
-- order before deleting them and commits asynchronously (this transaction only); being a
-- PL/pgSQL function, its statements are planned with sequential scans off (migration 0005), so
-- a release stays an index probe however small the table was when its plan was made.
SELECT fleet_lease_release(%(holder)s::text, string_to_array(%(ids)s::text, ',')::bigint[]) AS n;

-- name: lease_release_one
-- One lease by its key: nothing to order, so no row-lock step.
SELECT fleet_lease_release(%(holder)s::text, ARRAY[%(ids)s::text::bigint]) AS n;

-- name: lease_reap
DELETE FROM leases
WHERE id IN (SELECT id FROM leases WHERE expires_at <= fleet_now()
             ORDER BY id FOR UPDATE SKIP LOCKED);

-- name: lease_held
SELECT id, symbol, mode, holder, token, expires_at FROM leases
WHERE expires_at > fleet_now()
  AND (%(prefix)s::text IS NULL OR symbol = %(prefix)s::text
       OR (symbol >= fleet_descendant_lo(%(prefix)s::text)
           AND symbol < fleet_descendant_hi(%(prefix)s::text)))
  AND (%(holder)s::text IS NULL OR holder = %(holder)s::text)
ORDER BY symbol, id;

-- ---------------------------------------------------------------- task queue
-- name: task_insert
INSERT INTO tasks (id, kind, key, payload, status, attempts, max_attempts, run_after,
                   created_at, updated_at)
VALUES (%(id)s, %(kind)s, %(key)s, %(payload)s, 'queued', 0, %(max_attempts)s, fleet_now(),
        fleet_now(), fleet_now())
ON CONFLICT (kind, key) WHERE status IN ('queued', 'claimed') DO NOTHING
RETURNING id;

-- name: task_live_id
SELECT id FROM tasks
WHERE kind = %(kind)s AND key = %(key)s AND status IN ('queued', 'claimed');

-- name: task_claim
WITH picked AS (
    SELECT id FROM tasks
    WHERE status = 'queued' AND run_after <= fleet_now()
      AND (%(kinds)s::text[] IS NULL OR kind = ANY (%(kinds)s::text[]))
    ORDER BY created_at, id
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED)
UPDATE tasks t SET status = 'claimed', claimed_by = %(worker)s, attempts = t.attempts + 1,
                   heartbeat_at = fleet_now(), updated_at = fleet_now()
FROM picked WHERE t.id = picked.id
RETURNING t.id, t.kind, t.key, t.payload, t.attempts, t.claimed_by, t.created_at;

-- name: task_complete
UPDATE tasks SET status = 'done', result = %(result)s, updated_at = fleet_now()
WHERE id = %(id)s AND status = 'claimed';

-- name: task_fail
UPDATE tasks SET
    status = CASE WHEN %(retry)s AND attempts < max_attempts THEN 'queued' ELSE 'failed' END,
    error = %(error)s, claimed_by = NULL, run_after = fleet_now() + %(delay)s,
    updated_at = fleet_now()
WHERE id = %(id)s AND status = 'claimed';

-- name: task_heartbeat
UPDATE tasks SET heartbeat_at = fleet_now() WHERE claimed_by = %(worker)s AND status = 'claimed';

-- name: task_requeue_stale
UPDATE tasks SET
    status = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
    error = 'claimant stopped heartbeating', claimed_by = NULL, run_after = fleet_now(),
    updated_at = fleet_now()
WHERE id IN (SELECT id FROM tasks
             WHERE status = 'claimed' AND heartbeat_at < fleet_now() - %(older_than)s
             FOR UPDATE SKIP LOCKED);

-- name: task_get
SELECT id, kind, key, payload, status, attempts, max_attempts, claimed_by, result, error,
       created_at, updated_at
FROM tasks WHERE id = %(id)s;

-- name: task_counts
SELECT status, count(*) AS n FROM tasks GROUP BY status;

-- ---------------------------------------------------------------- ledger
-- name: ledger_lock
SELECT pg_advisory_xact_lock(1718, 1);

-- name: ledger_last
SELECT seq, hash FROM ledger ORDER BY seq DESC LIMIT 1;

-- name: ledger_insert
-- repo: the payload's "repository" (a string), else '': taken from the hashed payload itself.
-- PostgreSQL's JSON operators refuse the escape \u0000 anywhere in the text, so it is read as
-- \u0001 for this lookup only (a repository key holds neither; the payload is stored as given).
INSERT INTO ledger (seq, kind, unit, campaign, actor, payload, created_at, prev_hash, hash,
                    repo)
SELECT %(seq)s, %(kind)s, %(unit)s, %(campaign)s, %(actor)s, p.text, %(created_at)s,
       %(prev_hash)s, %(hash)s,
       CASE WHEN json_typeof(p.doc -> 'repository') = 'string' THEN p.doc ->> 'repository'
            ELSE '' END
FROM (SELECT %(payload)s::text AS text,
             replace(%(payload)s::text, E'\\u0000', E'\\u0001')::json AS doc) AS p;

-- name: ledger_rows
-- every row as stored, for the audit (a store from before a migration may lack a column)
SELECT * FROM ledger ORDER BY seq;

-- name: ledger_other_repo
-- an event of another repository than the given one (the store is shared: fleet.store.repo_scope)
SELECT 1 AS one FROM ledger WHERE repo <> '' AND repo <> %(repo)s LIMIT 1;

-- name: ledger_events
SELECT seq, kind, unit, campaign, actor, payload, created_at, prev_hash, hash, repo FROM ledger
WHERE (%(unit)s::text IS NULL OR unit = %(unit)s::text)
  AND (%(campaign)s::text IS NULL OR campaign = %(campaign)s::text)
  AND (%(kind)s::text IS NULL OR kind = %(kind)s::text)
  AND (%(since)s::double precision IS NULL OR created_at >= %(since)s::double precision)
  AND (%(until)s::double precision IS NULL OR created_at < %(until)s::double precision)
ORDER BY seq;

-- ---------------------------------------------------------------- controls
-- name: control_set
INSERT INTO controls (key, value, updated_at) VALUES (%(key)s, %(value)s, %(now)s)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;

-- name: control_get
SELECT value, updated_at FROM controls WHERE key = %(key)s;

-- name: control_delete
DELETE FROM controls WHERE key = %(key)s;

-- name: budget_ensure
INSERT INTO budgets (scope, usd, tokens, updated_at) VALUES (%(scope)s, 0, 0, %(now)s)
ON CONFLICT (scope) DO NOTHING;

-- name: budget_spend
UPDATE budgets SET usd = usd + %(usd)s, tokens = tokens + %(tokens)s, updated_at = %(now)s
WHERE scope = %(scope)s
  AND (%(limit_usd)s::double precision IS NULL
       OR usd + %(usd)s <= %(limit_usd)s::double precision)
  AND (%(limit_tokens)s::bigint IS NULL OR tokens + %(tokens)s <= %(limit_tokens)s::bigint);

-- name: budget_get
SELECT scope, usd, tokens FROM budgets WHERE scope = %(scope)s;

-- ---------------------------------------------------------------- memory
-- name: note_insert
INSERT INTO notes (text, tag, author, created_at) VALUES (%(text)s, %(tag)s, %(author)s, %(now)s)
RETURNING id, text, tag, author, created_at;

-- name: note_list
SELECT id, text, tag, author, created_at FROM notes
WHERE (%(tag)s::text IS NULL OR tag = %(tag)s::text) ORDER BY id;

-- name: note_delete
DELETE FROM notes WHERE id = %(id)s;

-- ---------------------------------------------------------------- library
-- name: artifact_insert
INSERT INTO artifacts (hash, size, content, text, created_at)
VALUES (%(hash)s, %(size)s, %(content)s, %(text)s, %(now)s)
ON CONFLICT (hash) DO NOTHING;

-- name: artifact_ref_insert
INSERT INTO artifact_refs (hash, campaign, unit, kind, name, created_at)
VALUES (%(hash)s, %(campaign)s, %(unit)s, %(kind)s, %(name)s, %(now)s)
ON CONFLICT (hash, campaign, unit, kind, name) DO NOTHING;

-- name: artifact_ref_get
SELECT r.id, r.hash, r.campaign, r.unit, r.kind, r.name, r.created_at, a.size
FROM artifact_refs r JOIN artifacts a ON a.hash = r.hash
WHERE r.hash = %(hash)s AND r.campaign = %(campaign)s AND r.unit = %(unit)s
  AND r.kind = %(kind)s AND r.name = %(name)s;

-- name: artifact_get
SELECT content FROM artifacts WHERE hash = %(hash)s;

-- name: artifact_search
SELECT r.id, r.hash, r.campaign, r.unit, r.kind, r.name, r.created_at, a.size
FROM artifact_refs r JOIN artifacts a ON a.hash = r.hash
WHERE (%(campaign)s::text IS NULL OR r.campaign = %(campaign)s::text)
  AND (%(unit)s::text IS NULL OR r.unit = %(unit)s::text)
  AND (%(kind)s::text IS NULL OR r.kind = %(kind)s::text)
  AND (%(text)s::text IS NULL OR strpos(lower(r.name), lower(%(text)s::text)) > 0
       OR strpos(lower(coalesce(a.text, '')), lower(%(text)s::text)) > 0)
ORDER BY r.id DESC
LIMIT %(limit)s;

-- ---------------------------------------------------------------- findings
-- name: finding_get
-- '' (no repository named): any repository's row, an unowned one first
SELECT * FROM findings WHERE (%(repo)s = '' OR repo = %(repo)s) AND fingerprint = %(fingerprint)s
ORDER BY repo <> %(repo)s, repo LIMIT 1;

-- name: finding_insert
INSERT INTO findings (repo, fingerprint, campaign, rule, symbol, path, line, status, issue_ref,
                      data, first_seen, last_seen)
VALUES (%(repo)s, %(fingerprint)s, %(campaign)s, %(rule)s, %(symbol)s, %(path)s, %(line)s,
        'new', NULL, %(data)s, %(now)s, %(now)s);

-- name: finding_seen
-- A site matched again is the matching campaign's: a copy of a campaign (other fix params)
-- sweeping a repository the original swept takes over its findings, which it saw as 0 before.
UPDATE findings SET
    status = CASE WHEN status = 'suppressed' THEN 'suppressed'
                  WHEN status = 'fixed' THEN 'new' ELSE 'known' END,
    campaign = %(campaign)s, rule = %(rule)s,
    symbol = %(symbol)s, path = %(path)s, line = %(line)s, data = %(data)s, last_seen = %(now)s
WHERE repo = %(repo)s AND fingerprint = %(fingerprint)s;

-- name: finding_set_status
UPDATE findings SET status = %(status)s
WHERE repo = %(repo)s AND fingerprint = %(fingerprint)s;

-- name: finding_set_issue
UPDATE findings SET issue_ref = %(issue_ref)s
WHERE repo = %(repo)s AND fingerprint = %(fingerprint)s;

-- name: finding_list
-- '' (no repository named): every repository's findings
SELECT * FROM findings
WHERE (%(repo)s = '' OR repo = %(repo)s) AND (%(campaign)s::text IS NULL OR campaign = %(campaign)s::text)
  AND (%(status)s::text IS NULL OR status = %(status)s::text)
ORDER BY campaign, path, line, fingerprint, repo;

-- name: finding_mark_fixed
UPDATE findings SET status = 'fixed', last_seen = %(now)s
WHERE repo = %(repo)s AND campaign = %(campaign)s AND status IN ('new', 'known')
  AND fingerprint <> ALL (%(seen)s::text[]);

-- name: finding_adopt
-- Rows from before findings had a repository ('') become this repository's (a fingerprint
-- it already has keeps its own row).
UPDATE findings SET repo = %(repo)s
WHERE repo = '' AND fingerprint NOT IN (SELECT fingerprint FROM findings WHERE repo = %(repo)s);

-- ---------------------------------------------------------------- changes
-- name: change_upsert
INSERT INTO changes (repo, branch, title, body, state, labels, created_at, updated_at)
VALUES (%(repo)s, %(branch)s, %(title)s, %(body)s, 'open', %(labels)s, %(now)s, %(now)s)
ON CONFLICT (repo, branch) DO UPDATE SET
    title = excluded.title, body = excluded.body, labels = excluded.labels,
    state = 'open', updated_at = excluded.updated_at
RETURNING *;

-- name: change_get
SELECT * FROM changes WHERE number = %(number)s;

-- name: change_by_branch
SELECT * FROM changes WHERE repo = %(repo)s AND branch = %(branch)s;

-- name: change_set_state
UPDATE changes SET state = %(state)s, updated_at = %(now)s WHERE number = %(number)s;

-- name: change_list
SELECT * FROM changes
WHERE (%(repo)s::text IS NULL OR repo = %(repo)s::text)
  AND (%(state)s::text IS NULL OR state = %(state)s::text)
ORDER BY number;

-- ---------------------------------------------------------------- API tokens
-- name: token_insert
INSERT INTO api_tokens (id, name, secret_hash, scopes, created_at)
VALUES (%(id)s, %(name)s, %(secret_hash)s, %(scopes)s, %(now)s);

-- name: token_get
SELECT id, name, secret_hash, scopes, created_at, revoked_at FROM api_tokens WHERE id = %(id)s;

-- name: token_list
SELECT id, name, secret_hash, scopes, created_at, revoked_at FROM api_tokens ORDER BY created_at;

-- name: token_revoke
UPDATE api_tokens SET revoked_at = %(now)s WHERE id = %(id)s AND revoked_at IS NULL;
