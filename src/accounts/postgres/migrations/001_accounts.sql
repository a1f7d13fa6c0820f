-- txgate account store, version 1: one row per account, the document in the accounts file's
-- shape ({ id, keySha256[], submissionEnabled, allowUntipped, grants[] }), validated by every
-- writer and every edge exactly as the file is. Keys are stored only as SHA-256.
CREATE TABLE txgate_accounts (
  id         text PRIMARY KEY CHECK (id ~ '^[A-Za-z0-9_.-]{1,64}$'),
  doc        jsonb NOT NULL CHECK (doc->>'id' = id),
  version    bigint NOT NULL DEFAULT 1,
  updated_at timestamptz NOT NULL DEFAULT now()
);

-- Every change bumps the row's version.
CREATE FUNCTION txgate_accounts_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  NEW.version := OLD.version + 1;
  NEW.updated_at := now();
  RETURN NEW;
END
$$;
CREATE TRIGGER txgate_accounts_version BEFORE UPDATE ON txgate_accounts
  FOR EACH ROW EXECUTE FUNCTION txgate_accounts_version();

-- Every change is pushed to the edges (LISTEN txgate_accounts): the account id and its version
-- (0 for a deleted account). Notifications are sent at commit; a change made by hand notifies too.
CREATE FUNCTION txgate_accounts_notify() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' THEN
    PERFORM pg_notify('txgate_accounts', json_build_object('id', OLD.id, 'version', 0)::text);
  ELSE
    PERFORM pg_notify('txgate_accounts', json_build_object('id', NEW.id, 'version', NEW.version)::text);
  END IF;
  RETURN NULL;
END
$$;
CREATE TRIGGER txgate_accounts_notify AFTER INSERT OR UPDATE OR DELETE ON txgate_accounts
  FOR EACH ROW EXECUTE FUNCTION txgate_accounts_notify();
