-- Session external ids are scoped per user (docs/security.md, issue 11): a client's own session id
-- names a session of that user only, so another user can neither probe which ids exist nor squat
-- one. Unique per (user_id, external_id); lookups by external id always name the user.
DROP INDEX "sessions_external_id_key";
CREATE UNIQUE INDEX "sessions_user_id_external_id_key" ON "sessions"("user_id", "external_id");
