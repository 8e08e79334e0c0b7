-- Session service (issue 5).

-- The retention purge finds sessions idle for longer than SESSION_RETENTION_DAYS.
CREATE INDEX "sessions_last_activity_at_idx" ON "sessions"("last_activity_at");

-- Change feed of sessions: every committed change to a session or to one of its tasks sends
-- the session's id on channel `tog_session_changed` (delivered at commit, duplicates within one
-- transaction collapsed by PostgreSQL). The session service LISTENs and drops its Redis cache
-- entries of that session, whichever process made the change (orchestrator, worker, itself).
CREATE FUNCTION "tog_notify_session_changed"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  row_data RECORD;
BEGIN
  IF TG_OP = 'DELETE' THEN row_data := OLD; ELSE row_data := NEW; END IF;
  IF TG_TABLE_NAME = 'sessions' THEN
    PERFORM pg_notify('tog_session_changed', row_data.id::text);
  ELSE
    PERFORM pg_notify('tog_session_changed', row_data.session_id::text);
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER "sessions_notify_change"
  AFTER UPDATE OR DELETE ON "sessions"
  FOR EACH ROW EXECUTE FUNCTION "tog_notify_session_changed"();

CREATE TRIGGER "tasks_notify_insert_delete"
  AFTER INSERT OR DELETE ON "tasks"
  FOR EACH ROW EXECUTE FUNCTION "tog_notify_session_changed"();

-- Lease heartbeats touch only lease columns; every status, result or mode change moves updated_at.
CREATE TRIGGER "tasks_notify_update"
  AFTER UPDATE ON "tasks"
  FOR EACH ROW
  WHEN (OLD."updated_at" IS DISTINCT FROM NEW."updated_at" OR OLD."status" IS DISTINCT FROM NEW."status")
  EXECUTE FUNCTION "tog_notify_session_changed"();
