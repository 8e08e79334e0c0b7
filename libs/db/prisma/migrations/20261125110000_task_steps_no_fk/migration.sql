-- task_steps without its foreign key to tasks (docs/performance.md "Run"). A step row is written
-- only by the run that holds the task's lease: the checkpoint and the final write insert the rows
-- joined to the task row they fence on, so the key cannot point nowhere when it is written. The
-- constraint's per-row check took a FOR KEY SHARE lock on the task row for every step row, 7 per
-- simple task, a third of PostgreSQL's execution time per task (pg_stat_statements, completion
-- phase of the task bench). What it also did, cascading a task's deletion (a purged session), is
-- kept by one statement-level trigger, which costs nothing when steps are written.
ALTER TABLE "task_steps" DROP CONSTRAINT "task_steps_task_id_fkey";

CREATE FUNCTION tog_delete_task_steps() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  DELETE FROM task_steps s USING deleted_tasks d WHERE s.task_id = d.id;
  RETURN NULL;
END $$;

CREATE TRIGGER "tasks_delete_steps" AFTER DELETE ON "tasks"
  REFERENCING OLD TABLE AS deleted_tasks FOR EACH STATEMENT EXECUTE FUNCTION tog_delete_task_steps();
