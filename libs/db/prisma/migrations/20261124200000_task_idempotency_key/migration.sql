-- Durable idempotency (issue 14, docs/reliability.md "Idempotency"): a task submitted with an
-- Idempotency-Key carries the request's identity (sha256 hex of key, user, path and body, as the
-- gateway computes it), so a repeated key still finds its task after Redis lost its data. The
-- submit's own INSERT detects the duplicate (ON CONFLICT on this index): no extra statement.
-- Partial: tasks without a key (most) add no index entry. Neither column changes on status
-- updates, so those stay HOT.
ALTER TABLE "tasks" ADD COLUMN "idempotency_key" CHAR(64);
CREATE UNIQUE INDEX "tasks_user_id_idempotency_key_key" ON "tasks"("user_id", "idempotency_key") WHERE "idempotency_key" IS NOT NULL;
