-- Findings belong to a repository: one shared store holds many repositories, and a sweep of one
-- marks only its own findings fixed. The key is (repo, fingerprint): the same code in two
-- repositories is two findings. Rows from before are repo '' (adopted by the repository whose
-- state directory names the store, see fleet/home.py).
ALTER TABLE findings ADD COLUMN repo text NOT NULL DEFAULT '';
ALTER TABLE findings DROP CONSTRAINT findings_pkey;
ALTER TABLE findings ADD PRIMARY KEY (repo, fingerprint);
DROP INDEX findings_campaign_status;
CREATE INDEX findings_campaign_status ON findings (repo, campaign, status);
