-- Most sessions have no external id: a submit without a session opens one with external_id NULL,
-- and a btree keeps an entry for NULL keys too. So every new session, and every update of one
-- that is not HOT, added an entry to this index that no lookup can use (lookups by external id
-- name a non-NULL id). Partial, like tasks_user_id_idempotency_key_key: only named sessions
-- cost an entry, and uniqueness per (user_id, external_id) is unchanged
-- (docs/performance.md "Index entries for named sessions only").
DROP INDEX "sessions_user_id_external_id_key";
CREATE UNIQUE INDEX "sessions_user_id_external_id_key" ON "sessions"("user_id", "external_id") WHERE "external_id" IS NOT NULL;
