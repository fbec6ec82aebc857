-- Findings belong to a repository: one store (a shared one above all) holds many repositories,
-- and a sweep of one marks only its own findings fixed. The key is (repo, fingerprint): the same
-- code in two repositories is two findings. Rows from before are repo '' (adopted by the
-- repository whose state directory holds the store, see fleet/home.py).
ALTER TABLE findings RENAME TO findings_before_repo;
DROP INDEX findings_campaign_status;
CREATE TABLE findings (
    repo TEXT NOT NULL DEFAULT '',
    fingerprint TEXT NOT NULL,
    campaign TEXT NOT NULL,
    rule TEXT NOT NULL,
    symbol TEXT NOT NULL,
    path TEXT NOT NULL,
    line INTEGER NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('new', 'known', 'fixed', 'suppressed')),
    issue_ref TEXT,
    data TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    PRIMARY KEY (repo, fingerprint)
);
INSERT INTO findings (repo, fingerprint, campaign, rule, symbol, path, line, status, issue_ref,
                      data, first_seen, last_seen)
SELECT '', fingerprint, campaign, rule, symbol, path, line, status, issue_ref, data, first_seen,
       last_seen
FROM findings_before_repo;
DROP TABLE findings_before_repo;
CREATE INDEX findings_campaign_status ON findings (repo, campaign, status);
