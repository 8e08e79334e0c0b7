-- Run by the task bench right after it seeds the history (bench/tasks/lib/seed.ts), in the same
-- transaction. The seeding runs with session_replication_role = replica, so the triggers that keep
-- `user_counters` (migration 20261124000000_hot_paths) did not fire for the copied rows: the
-- seeded user's counts are rebuilt here from the rows, as the migration does for existing data.
--   current_setting('bench.seed_user_id')::uuid         the seeded user
--   current_setting('bench.seed_big_session_id')::uuid  the session with the 1,000 turns
DELETE FROM user_counters WHERE user_id = current_setting('bench.seed_user_id')::uuid;
INSERT INTO user_counters (user_id, shard, tasks_queued, tasks_running, tasks_completed, tasks_failed, tasks_cancelled, tasks_timeout, sessions_active)
SELECT u, 0,
       (SELECT count(*) FROM tasks WHERE user_id = u AND status = 'QUEUED'),
       (SELECT count(*) FROM tasks WHERE user_id = u AND status = 'RUNNING'),
       (SELECT count(*) FROM tasks WHERE user_id = u AND status = 'COMPLETED'),
       (SELECT count(*) FROM tasks WHERE user_id = u AND status = 'FAILED'),
       (SELECT count(*) FROM tasks WHERE user_id = u AND status = 'CANCELLED'),
       (SELECT count(*) FROM tasks WHERE user_id = u AND status = 'TIMEOUT'),
       (SELECT count(*) FROM sessions WHERE user_id = u AND deleted_at IS NULL)
FROM (SELECT current_setting('bench.seed_user_id')::uuid AS u) s;
UPDATE sessions s SET task_count = (SELECT count(*) FROM tasks t WHERE t.session_id = s.id)
WHERE s.id = current_setting('bench.seed_big_session_id')::uuid;
