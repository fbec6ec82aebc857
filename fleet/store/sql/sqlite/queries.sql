-- Named queries of the SQLite store. Parameters are :named; times are epoch seconds given by the
-- caller (one machine). Lists arrive as JSON arrays and are read with json_each.

-- ---------------------------------------------------------------- leases
-- name: lease_conflicts
SELECT id, symbol, mode, holder FROM leases
WHERE expires_at > :now AND holder <> :holder
  AND (:mode = 'write' OR mode = 'write')
  AND (symbol = :symbol
       OR symbol IN (SELECT value FROM json_each(:ancestors))
       OR (symbol >= :lo AND symbol < :hi))
ORDER BY id;

-- name: fence_next
UPDATE fence_counter SET value = value + 1 WHERE id = 1 RETURNING value;

-- name: lease_insert
INSERT INTO leases (symbol, mode, holder, unit, token, granted_at, expires_at)
VALUES (:symbol, :mode, :holder, :unit, :token, :now, :now + :ttl)
RETURNING id, symbol, mode, holder, token, expires_at;

-- name: fence_upsert
-- write_token: the first token of the acquisition that wrote (its own grants never fence off
-- each other: a.py::C and a.py::C.m taken together)
INSERT INTO lease_fences (symbol, token, write_token)
VALUES (:symbol, :token, CASE WHEN :mode = 'write' THEN :base ELSE 0 END)
ON CONFLICT (symbol) DO UPDATE SET
    token = max(lease_fences.token, excluded.token),
    write_token = max(lease_fences.write_token, excluded.write_token);

-- name: fence_state
SELECT
    (SELECT token FROM lease_fences WHERE symbol = :symbol) AS token,
    (SELECT max(write_token) FROM lease_fences
     WHERE symbol = :symbol
        OR symbol IN (SELECT value FROM json_each(:ancestors))
        OR (symbol >= :lo AND symbol < :hi)) AS write_token;

-- name: lease_renew
UPDATE leases SET expires_at = :now + :ttl WHERE holder = :holder AND expires_at > :now;

-- name: lease_release
DELETE FROM leases WHERE holder = :holder;

-- name: lease_release_ids
DELETE FROM leases WHERE id IN (SELECT value FROM json_each(:ids)) AND holder = :holder;

-- name: lease_reap
DELETE FROM leases WHERE expires_at <= :now;

-- name: lease_held
SELECT id, symbol, mode, holder, token, expires_at FROM leases
WHERE expires_at > :now
  AND (:prefix IS NULL OR symbol = :prefix OR (symbol >= :lo AND symbol < :hi))
  AND (:holder IS NULL OR holder = :holder)
ORDER BY symbol, id;

-- ---------------------------------------------------------------- task queue
-- name: task_insert
INSERT INTO tasks (id, kind, key, payload, status, attempts, max_attempts, run_after,
                   created_at, updated_at)
VALUES (:id, :kind, :key, :payload, 'queued', 0, :max_attempts, :now, :now, :now)
ON CONFLICT (kind, key) WHERE status IN ('queued', 'claimed') DO NOTHING
RETURNING id;

-- name: task_live_id
SELECT id FROM tasks WHERE kind = :kind AND key = :key AND status IN ('queued', 'claimed');

-- name: task_claim
UPDATE tasks SET status = 'claimed', claimed_by = :worker, attempts = attempts + 1,
                 heartbeat_at = :now, updated_at = :now
WHERE id IN (
    SELECT id FROM tasks
    WHERE status = 'queued' AND run_after <= :now
      AND (:kinds IS NULL OR kind IN (SELECT value FROM json_each(:kinds)))
    ORDER BY created_at, id
    LIMIT :limit)
RETURNING id, kind, key, payload, attempts, claimed_by, created_at;

-- name: task_complete
UPDATE tasks SET status = 'done', result = :result, updated_at = :now
WHERE id = :id AND status = 'claimed';

-- name: task_fail
UPDATE tasks SET
    status = CASE WHEN :retry AND attempts < max_attempts THEN 'queued' ELSE 'failed' END,
    error = :error, claimed_by = NULL, run_after = :now + :delay, updated_at = :now
WHERE id = :id AND status = 'claimed';

-- name: task_heartbeat
UPDATE tasks SET heartbeat_at = :now WHERE claimed_by = :worker AND status = 'claimed';

-- name: task_requeue_stale
UPDATE tasks SET
    status = CASE WHEN attempts < max_attempts THEN 'queued' ELSE 'failed' END,
    error = 'claimant stopped heartbeating', claimed_by = NULL, run_after = :now,
    updated_at = :now
WHERE status = 'claimed' AND heartbeat_at < :cutoff;

-- name: task_get
SELECT id, kind, key, payload, status, attempts, max_attempts, claimed_by, result, error,
       created_at, updated_at
FROM tasks WHERE id = :id;

-- name: task_counts
SELECT status, count(*) AS n FROM tasks GROUP BY status;

-- ---------------------------------------------------------------- ledger
-- name: ledger_last
SELECT seq, hash FROM ledger ORDER BY seq DESC LIMIT 1;

-- name: ledger_insert
-- repo: the payload's "repository" (a string), else '': taken from the hashed payload itself
INSERT INTO ledger (seq, kind, unit, campaign, actor, payload, created_at, prev_hash, hash,
                    repo)
VALUES (:seq, :kind, :unit, :campaign, :actor, :payload, :created_at, :prev_hash, :hash,
        CASE WHEN json_type(:payload, '$.repository') = 'text'
             THEN json_extract(:payload, '$.repository') ELSE '' END);

-- name: ledger_rows
-- every row as stored, for the audit (a store from before a migration may lack a column)
SELECT * FROM ledger ORDER BY seq;

-- name: ledger_other_repo
-- an event of a repository other than :repo (the store is shared: fleet.store.repo_scope)
SELECT 1 AS one FROM ledger WHERE repo <> '' AND repo <> :repo LIMIT 1;

-- name: ledger_events
SELECT seq, kind, unit, campaign, actor, payload, created_at, prev_hash, hash, repo FROM ledger
WHERE (:unit IS NULL OR unit = :unit)
  AND (:campaign IS NULL OR campaign = :campaign)
  AND (:kind IS NULL OR kind = :kind)
  AND (:since IS NULL OR created_at >= :since)
  AND (:until IS NULL OR created_at < :until)
ORDER BY seq;

-- ---------------------------------------------------------------- controls
-- name: control_set
INSERT INTO controls (key, value, updated_at) VALUES (:key, :value, :now)
ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;

-- name: control_get
SELECT value, updated_at FROM controls WHERE key = :key;

-- name: control_delete
DELETE FROM controls WHERE key = :key;

-- name: budget_ensure
INSERT INTO budgets (scope, usd, tokens, updated_at) VALUES (:scope, 0, 0, :now)
ON CONFLICT (scope) DO NOTHING;

-- name: budget_spend
UPDATE budgets SET usd = usd + :usd, tokens = tokens + :tokens, updated_at = :now
WHERE scope = :scope
  AND (:limit_usd IS NULL OR usd + :usd <= :limit_usd)
  AND (:limit_tokens IS NULL OR tokens + :tokens <= :limit_tokens);

-- name: budget_get
SELECT scope, usd, tokens FROM budgets WHERE scope = :scope;

-- ---------------------------------------------------------------- memory
-- name: note_insert
INSERT INTO notes (text, tag, author, created_at) VALUES (:text, :tag, :author, :now)
RETURNING id, text, tag, author, created_at;

-- name: note_list
SELECT id, text, tag, author, created_at FROM notes
WHERE (:tag IS NULL OR tag = :tag) ORDER BY id;

-- name: note_delete
DELETE FROM notes WHERE id = :id;

-- ---------------------------------------------------------------- library
-- name: artifact_insert
INSERT INTO artifacts (hash, size, content, text, created_at)
VALUES (:hash, :size, :content, :text, :now)
ON CONFLICT (hash) DO NOTHING;

-- name: artifact_ref_insert
INSERT INTO artifact_refs (hash, campaign, unit, kind, name, created_at)
VALUES (:hash, :campaign, :unit, :kind, :name, :now)
ON CONFLICT (hash, campaign, unit, kind, name) DO NOTHING;

-- name: artifact_ref_get
SELECT r.id, r.hash, r.campaign, r.unit, r.kind, r.name, r.created_at, a.size
FROM artifact_refs r JOIN artifacts a ON a.hash = r.hash
WHERE r.hash = :hash AND r.campaign = :campaign AND r.unit = :unit AND r.kind = :kind
  AND r.name = :name;

-- name: artifact_get
SELECT content FROM artifacts WHERE hash = :hash;

-- name: artifact_search
SELECT r.id, r.hash, r.campaign, r.unit, r.kind, r.name, r.created_at, a.size
FROM artifact_refs r JOIN artifacts a ON a.hash = r.hash
WHERE (:campaign IS NULL OR r.campaign = :campaign)
  AND (:unit IS NULL OR r.unit = :unit)
  AND (:kind IS NULL OR r.kind = :kind)
  AND (:text IS NULL OR instr(lower(r.name), lower(:text)) > 0
       OR instr(lower(coalesce(a.text, '')), lower(:text)) > 0)
ORDER BY r.id DESC
LIMIT :limit;

-- ---------------------------------------------------------------- findings
-- name: finding_get
-- '' (no repository named): any repository's row, an unowned one first
SELECT * FROM findings WHERE (:repo = '' OR repo = :repo) AND fingerprint = :fingerprint
ORDER BY repo <> :repo, repo LIMIT 1;

-- name: finding_insert
INSERT INTO findings (repo, fingerprint, campaign, rule, symbol, path, line, status, issue_ref,
                      data, first_seen, last_seen)
VALUES (:repo, :fingerprint, :campaign, :rule, :symbol, :path, :line, 'new', NULL, :data, :now,
        :now);

-- name: finding_seen
-- A site matched again is the matching campaign's: a copy of a campaign (other fix params)
-- sweeping a repository the original swept takes over its findings, which it saw as 0 before.
UPDATE findings SET
    status = CASE WHEN status = 'suppressed' THEN 'suppressed'
                  WHEN status = 'fixed' THEN 'new' ELSE 'known' END,
    campaign = :campaign, rule = :rule,
    symbol = :symbol, path = :path, line = :line, data = :data, last_seen = :now
WHERE repo = :repo AND fingerprint = :fingerprint;

-- name: finding_set_status
UPDATE findings SET status = :status
WHERE repo = :repo AND fingerprint = :fingerprint;

-- name: finding_set_issue
UPDATE findings SET issue_ref = :issue_ref
WHERE repo = :repo AND fingerprint = :fingerprint;

-- name: finding_list
-- '' (no repository named): every repository's findings
SELECT * FROM findings
WHERE (:repo = '' OR repo = :repo) AND (:campaign IS NULL OR campaign = :campaign)
  AND (:status IS NULL OR status = :status)
ORDER BY campaign, path, line, fingerprint, repo;

-- name: finding_mark_fixed
UPDATE findings SET status = 'fixed', last_seen = :now
WHERE repo = :repo AND campaign = :campaign AND status IN ('new', 'known')
  AND fingerprint NOT IN (SELECT value FROM json_each(:seen));

-- name: finding_adopt
-- Rows from before findings had a repository ('') become this repository's (a fingerprint
-- it already has keeps its own row).
UPDATE findings SET repo = :repo
WHERE repo = '' AND fingerprint NOT IN (SELECT fingerprint FROM findings WHERE repo = :repo);

-- ---------------------------------------------------------------- changes
-- name: change_upsert
INSERT INTO changes (repo, branch, title, body, state, labels, created_at, updated_at)
VALUES (:repo, :branch, :title, :body, 'open', :labels, :now, :now)
ON CONFLICT (repo, branch) DO UPDATE SET
    title = excluded.title, body = excluded.body, labels = excluded.labels,
    state = 'open', updated_at = excluded.updated_at
RETURNING *;

-- name: change_get
SELECT * FROM changes WHERE number = :number;

-- name: change_by_branch
SELECT * FROM changes WHERE repo = :repo AND branch = :branch;

-- name: change_set_state
UPDATE changes SET state = :state, updated_at = :now WHERE number = :number;

-- name: change_list
SELECT * FROM changes
WHERE (:repo IS NULL OR repo = :repo) AND (:state IS NULL OR state = :state)
ORDER BY number;

-- ---------------------------------------------------------------- API tokens
-- name: token_insert
INSERT INTO api_tokens (id, name, secret_hash, scopes, created_at)
VALUES (:id, :name, :secret_hash, :scopes, :now);

-- name: token_get
SELECT id, name, secret_hash, scopes, created_at, revoked_at FROM api_tokens WHERE id = :id;

-- name: token_list
SELECT id, name, secret_hash, scopes, created_at, revoked_at FROM api_tokens ORDER BY created_at;

-- name: token_revoke
UPDATE api_tokens SET revoked_at = :now WHERE id = :id AND revoked_at IS NULL;
