-- Ledger events carry their repository in a column (a work unit's `unit.planned` event above
-- all: the unit belongs to that repository), '' for an event of no repository (the kill switch,
-- tokens). It is the payload's "repository" field, which the event's hash covers: `fleet ledger
-- verify` reports a column that disagrees with it. Rows from before take it from their payload
-- (a payload that is not JSON keeps ''; \u0000 is read as \u0001, as on insert), with the
-- append-only trigger held off for this migration's own UPDATE only.
ALTER TABLE ledger ADD COLUMN repo text NOT NULL DEFAULT '';
CREATE INDEX ledger_repo ON ledger (repo, campaign);
ALTER TABLE ledger DISABLE TRIGGER ledger_no_update_delete;
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT seq, payload FROM ledger WHERE payload LIKE '%"repository"%' LOOP
        BEGIN
            UPDATE ledger SET repo = doc ->> 'repository'
            FROM (SELECT replace(r.payload, E'\\u0000', E'\\u0001')::json AS doc) AS p
            WHERE seq = r.seq AND json_typeof(doc -> 'repository') = 'string';
        EXCEPTION WHEN others THEN
            NULL;  -- not JSON: no repository to take
        END;
    END LOOP;
END $$;
ALTER TABLE ledger ENABLE TRIGGER ledger_no_update_delete;
