-- No planner statistics for the payload columns of the task path (docs/performance.md "Analyze
-- of the payload columns"). No statement filters, joins or sorts by them: every one finds its rows
-- by key. Yet each automatic ANALYZE sorted a 30,000-row sample of each to build its histogram,
-- on the cores the task path runs on: task_steps' took 355–470 ms of a core, 214 ms without
-- `output` and `events`; tasks' 78–103 ms, 50–53 ms without `query`, `spec` and `result`.
ALTER TABLE "task_steps" ALTER COLUMN "output" SET STATISTICS 0, ALTER COLUMN "events" SET STATISTICS 0;
ALTER TABLE "tasks" ALTER COLUMN "query" SET STATISTICS 0, ALTER COLUMN "spec" SET STATISTICS 0,
  ALTER COLUMN "result" SET STATISTICS 0;
