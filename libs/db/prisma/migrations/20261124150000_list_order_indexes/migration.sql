-- The lists order by (time DESC, id DESC) so that pages are stable when many rows share a
-- timestamp (bulk imports, one transaction's inserts). With the id in the index the scan
-- returns rows already in that order and stops after the page; without it, PostgreSQL has to
-- read and sort every row sharing the boundary timestamp (docs/performance.md "Lists").

-- DropIndex
DROP INDEX "tasks_user_id_created_at_idx";

-- DropIndex
DROP INDEX "tasks_session_id_created_at_idx";

-- DropIndex
DROP INDEX "sessions_user_id_last_activity_at_idx";

-- CreateIndex
CREATE INDEX "tasks_user_id_created_at_id_idx" ON "tasks"("user_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "tasks_session_id_created_at_id_idx" ON "tasks"("session_id", "created_at", "id");

-- CreateIndex
CREATE INDEX "sessions_user_id_last_activity_at_id_idx" ON "sessions"("user_id", "last_activity_at", "id");
