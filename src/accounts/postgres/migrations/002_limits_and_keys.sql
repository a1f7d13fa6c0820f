-- txgate account store, version 2: bounded rows, and keys unique where the data lives.
--
-- Each row's size, computed when it is written (a generated column no trigger can skip): an
-- edge reads it with the ids and versions and refuses a row past the limit without reading its
-- document (reading a 19.5 MB document takes seconds of the server's time).
ALTER TABLE txgate_accounts ADD COLUMN doc_bytes integer GENERATED ALWAYS AS (octet_length(doc::text)) STORED;
--
-- Limits (src/accounts/limits.ts; the CLI, the file loader and every edge enforce the same):
-- a write past any of them is refused, naming the account and the limit.
CREATE FUNCTION txgate_account_limit_problem(doc jsonb) RETURNS text LANGUAGE plpgsql IMMUTABLE AS $$
DECLARE
  g jsonb;
  i int := 0;
BEGIN
  IF octet_length(doc::text) > 8388608 THEN
    RETURN format('the document is %s bytes, more than the 8388608 one account may hold', octet_length(doc::text));
  END IF;
  IF jsonb_typeof(doc->'keySha256') = 'array' AND jsonb_array_length(doc->'keySha256') > 64 THEN
    RETURN format('keySha256: %s entries, more than the 64 one account may hold', jsonb_array_length(doc->'keySha256'));
  END IF;
  IF jsonb_typeof(doc->'grants') = 'array' THEN
    IF jsonb_array_length(doc->'grants') > 64 THEN
      RETURN format('grants: %s entries, more than the 64 one account may hold', jsonb_array_length(doc->'grants'));
    END IF;
    FOR g IN SELECT e FROM jsonb_array_elements(doc->'grants') AS e LOOP
      IF jsonb_typeof(g) = 'object' THEN
        IF jsonb_typeof(g->'tipAddresses') = 'array' AND jsonb_array_length(g->'tipAddresses') > 100000 THEN
          RETURN format('grants[%s].tipAddresses: %s entries, more than the 100000 one grant may hold', i, jsonb_array_length(g->'tipAddresses'));
        END IF;
        IF jsonb_typeof(g->'senders') = 'array' AND jsonb_array_length(g->'senders') > 100000 THEN
          RETURN format('grants[%s].senders: %s entries, more than the 100000 one grant may hold', i, jsonb_array_length(g->'senders'));
        END IF;
        IF jsonb_typeof(g->'feePatterns') = 'array' AND jsonb_array_length(g->'feePatterns') > 64 THEN
          RETURN format('grants[%s].feePatterns: %s entries, more than the 64 one grant may hold', i, jsonb_array_length(g->'feePatterns'));
        END IF;
      END IF;
      i := i + 1;
    END LOOP;
  END IF;
  RETURN NULL;
END
$$;

CREATE FUNCTION txgate_accounts_limits() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  p text := txgate_account_limit_problem(NEW.doc);
BEGIN
  IF p IS NOT NULL THEN
    RAISE EXCEPTION 'account "%" refused: %', NEW.id, p USING ERRCODE = 'check_violation';
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER txgate_accounts_limits BEFORE INSERT OR UPDATE ON txgate_accounts
  FOR EACH ROW EXECUTE FUNCTION txgate_accounts_limits();

-- Key hashes, one row each: the primary key refuses a second account holding a key (and one
-- account listing a key twice). Kept by a trigger from each document's keySha256, so a write by
-- hand is held to it as the CLI is. Entries that are not 64 hex digits are not keys (the edges
-- refuse such a row) and are not listed.
CREATE TABLE txgate_account_keys (
  key_sha256 text PRIMARY KEY,
  account_id text NOT NULL REFERENCES txgate_accounts (id) ON DELETE CASCADE ON UPDATE CASCADE
);
CREATE INDEX txgate_account_keys_account ON txgate_account_keys (account_id);

CREATE FUNCTION txgate_account_key_hashes(doc jsonb) RETURNS SETOF text LANGUAGE sql IMMUTABLE AS $$
  SELECT lower(h) FROM jsonb_array_elements_text(CASE WHEN jsonb_typeof(doc->'keySha256') = 'array' THEN doc->'keySha256' ELSE '[]'::jsonb END) AS h
  WHERE h ~ '^[0-9a-fA-F]{64}$'
$$;

-- Refuses the migration, naming the accounts, where the data already has a key held twice.
DO $$
DECLARE
  clash text;
BEGIN
  SELECT string_agg(format('key hash %s… listed by %s', left(h, 12), ids), '; ') INTO clash
  FROM (
    SELECT h, string_agg(DISTINCT id, ', ' ORDER BY id) AS ids
    FROM txgate_accounts, txgate_account_key_hashes(doc) AS h
    GROUP BY h HAVING count(DISTINCT id) > 1
  ) d;
  IF clash IS NOT NULL THEN
    RAISE EXCEPTION 'migration 002 refused: accounts share a key (%): remove each key from all but one account, then migrate again', clash
      USING ERRCODE = 'unique_violation';
  END IF;
END
$$;
INSERT INTO txgate_account_keys (key_sha256, account_id)
  SELECT DISTINCT h, id FROM txgate_accounts, txgate_account_key_hashes(doc) AS h;

CREATE FUNCTION txgate_accounts_keys() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  holder text;
  dup text;
BEGIN
  IF TG_OP = 'UPDATE' AND NEW.doc->'keySha256' IS NOT DISTINCT FROM OLD.doc->'keySha256' THEN
    RETURN NULL;
  END IF;
  DELETE FROM txgate_account_keys WHERE account_id = NEW.id;
  SELECT h INTO dup FROM txgate_account_key_hashes(NEW.doc) AS h GROUP BY h HAVING count(*) > 1 LIMIT 1;
  IF dup IS NOT NULL THEN
    RAISE EXCEPTION 'account "%" refused: key hash %… is listed twice', NEW.id, left(dup, 12) USING ERRCODE = 'unique_violation';
  END IF;
  SELECT k.account_id, k.key_sha256 INTO holder, dup FROM txgate_account_keys k
    WHERE k.key_sha256 IN (SELECT txgate_account_key_hashes(NEW.doc)) LIMIT 1;
  IF holder IS NOT NULL THEN
    RAISE EXCEPTION 'account "%" refused: key hash %… is held by account "%"', NEW.id, left(dup, 12), holder USING ERRCODE = 'unique_violation';
  END IF;
  -- The primary key still decides between two transactions racing for one key.
  INSERT INTO txgate_account_keys (key_sha256, account_id) SELECT h, NEW.id FROM txgate_account_key_hashes(NEW.doc) AS h;
  RETURN NULL;
END
$$;
CREATE TRIGGER txgate_accounts_keys AFTER INSERT OR UPDATE ON txgate_accounts
  FOR EACH ROW EXECUTE FUNCTION txgate_accounts_keys();
