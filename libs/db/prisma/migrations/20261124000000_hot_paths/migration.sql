-- Hot paths that do not depend on vacuum, and counts that do not grow with history (issue 10;
-- docs/performance.md explains each choice).

-- 1. No index mentions tasks.status any more, and no column the hot path updates is indexed:
--    claim, heartbeat, mode, finish and the session totals are then HOT updates (the new row
--    version stays on its page and no index entry is added), so tables churned by 100,000
--    tasks without a vacuum keep indexes as small as their live rows. The free room left on
--    each page is what HOT needs. Lists filtered by status walk the user's own
--    (user_id, created_at) index and stop after as many matches as the counters below report.
DROP INDEX "tasks_status_created_at_idx";
ALTER TABLE "tasks" SET (fillfactor = 70);
ALTER TABLE "sessions" SET (fillfactor = 80);

-- 2. Session change hints leave PostgreSQL: a NOTIFY takes one database-wide lock from its
--    commit until the commit is flushed, so every task write that notified queued behind every
--    other one (5x fewer commits per second measured). Writers now publish the session id on
--    NATS after commit (<prefix>.sessions.changed; docs/architecture.md).
DROP TRIGGER "tasks_notify_update" ON "tasks";
DROP TRIGGER "tasks_notify_insert_delete" ON "tasks";
DROP TRIGGER "sessions_notify_change" ON "sessions";
DROP FUNCTION "tog_notify_session_changed"();

-- 3. Exact per-user counts for total_count of GET /tasks and GET /sessions, kept by triggers so
--    every writer (submit, claim, finish, cancel, purges) keeps them right. A user's counts are
--    spread over shards chosen by the writing backend, so concurrent transactions of one user
--    never wait for each other's row lock; a read sums at most 64 rows.
CREATE TABLE "user_counters" (
    "user_id" UUID NOT NULL,
    "shard" SMALLINT NOT NULL,
    "tasks_queued" INTEGER NOT NULL DEFAULT 0,
    "tasks_running" INTEGER NOT NULL DEFAULT 0,
    "tasks_completed" INTEGER NOT NULL DEFAULT 0,
    "tasks_failed" INTEGER NOT NULL DEFAULT 0,
    "tasks_cancelled" INTEGER NOT NULL DEFAULT 0,
    "tasks_timeout" INTEGER NOT NULL DEFAULT 0,
    "sessions_active" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "user_counters_pkey" PRIMARY KEY ("user_id","shard")
);
ALTER TABLE "user_counters" SET (fillfactor = 50);

CREATE FUNCTION "tog_add_user_counts"(u UUID, q INTEGER, r INTEGER, c INTEGER, f INTEGER, x INTEGER, t INTEGER, s INTEGER)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  sh SMALLINT := (pg_backend_pid() % 64)::smallint;
BEGIN
  UPDATE "user_counters" SET
    "tasks_queued" = "tasks_queued" + q, "tasks_running" = "tasks_running" + r, "tasks_completed" = "tasks_completed" + c,
    "tasks_failed" = "tasks_failed" + f, "tasks_cancelled" = "tasks_cancelled" + x, "tasks_timeout" = "tasks_timeout" + t,
    "sessions_active" = "sessions_active" + s
  WHERE "user_id" = u AND "shard" = sh;
  IF NOT FOUND THEN
    INSERT INTO "user_counters" AS k ("user_id", "shard", "tasks_queued", "tasks_running", "tasks_completed", "tasks_failed", "tasks_cancelled", "tasks_timeout", "sessions_active")
    VALUES (u, sh, q, r, c, f, x, t, s)
    ON CONFLICT ("user_id", "shard") DO UPDATE SET
      "tasks_queued" = k."tasks_queued" + q, "tasks_running" = k."tasks_running" + r, "tasks_completed" = k."tasks_completed" + c,
      "tasks_failed" = k."tasks_failed" + f, "tasks_cancelled" = k."tasks_cancelled" + x, "tasks_timeout" = k."tasks_timeout" + t,
      "sessions_active" = k."sessions_active" + s;
  END IF;
END
$$;

CREATE FUNCTION "tog_count_tasks"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  o TEXT;
  n TEXT;
  u UUID;
BEGIN
  IF TG_OP <> 'INSERT' THEN o := OLD."status"; u := OLD."user_id"; END IF;
  IF TG_OP <> 'DELETE' THEN n := NEW."status"; u := NEW."user_id"; END IF;
  IF o IS NOT DISTINCT FROM n THEN RETURN NULL; END IF;
  PERFORM "tog_add_user_counts"(u,
    (n IS NOT DISTINCT FROM 'QUEUED')::int - (o IS NOT DISTINCT FROM 'QUEUED')::int,
    (n IS NOT DISTINCT FROM 'RUNNING')::int - (o IS NOT DISTINCT FROM 'RUNNING')::int,
    (n IS NOT DISTINCT FROM 'COMPLETED')::int - (o IS NOT DISTINCT FROM 'COMPLETED')::int,
    (n IS NOT DISTINCT FROM 'FAILED')::int - (o IS NOT DISTINCT FROM 'FAILED')::int,
    (n IS NOT DISTINCT FROM 'CANCELLED')::int - (o IS NOT DISTINCT FROM 'CANCELLED')::int,
    (n IS NOT DISTINCT FROM 'TIMEOUT')::int - (o IS NOT DISTINCT FROM 'TIMEOUT')::int,
    0);
  RETURN NULL;
END
$$;

CREATE FUNCTION "tog_count_sessions"() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  was INTEGER := 0;
  now_active INTEGER := 0;
  u UUID;
BEGIN
  IF TG_OP <> 'INSERT' THEN was := (OLD."deleted_at" IS NULL)::int; u := OLD."user_id"; END IF;
  IF TG_OP <> 'DELETE' THEN now_active := (NEW."deleted_at" IS NULL)::int; u := NEW."user_id"; END IF;
  IF was = now_active THEN RETURN NULL; END IF;
  PERFORM "tog_add_user_counts"(u, 0, 0, 0, 0, 0, 0, now_active - was);
  RETURN NULL;
END
$$;

-- Deferred to commit: a counter row is locked only while its transaction commits, never while
-- it waits for something else (the submit transaction waits for the run's publish).
CREATE CONSTRAINT TRIGGER "tasks_count" AFTER INSERT OR DELETE OR UPDATE OF "status" ON "tasks"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "tog_count_tasks"();
CREATE CONSTRAINT TRIGGER "sessions_count" AFTER INSERT OR DELETE OR UPDATE OF "deleted_at" ON "sessions"
  DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION "tog_count_sessions"();

-- Counts of the rows that exist already (shard 0).
INSERT INTO "user_counters" ("user_id", "shard", "tasks_queued", "tasks_running", "tasks_completed", "tasks_failed", "tasks_cancelled", "tasks_timeout")
SELECT "user_id", 0,
       count(*) FILTER (WHERE "status" = 'QUEUED'), count(*) FILTER (WHERE "status" = 'RUNNING'),
       count(*) FILTER (WHERE "status" = 'COMPLETED'), count(*) FILTER (WHERE "status" = 'FAILED'),
       count(*) FILTER (WHERE "status" = 'CANCELLED'), count(*) FILTER (WHERE "status" = 'TIMEOUT')
FROM "tasks" GROUP BY "user_id";
INSERT INTO "user_counters" AS k ("user_id", "shard", "sessions_active")
SELECT "user_id", 0, count(*) FROM "sessions" WHERE "deleted_at" IS NULL GROUP BY "user_id"
ON CONFLICT ("user_id", "shard") DO UPDATE SET "sessions_active" = EXCLUDED."sessions_active";
