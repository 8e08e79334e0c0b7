-- One name per concept (docs/architecture.md "Glossary"): the task's id column of the per-task
-- tables is task_id, as everywhere else; the API keeps `workflow_id` on the wire. Renames only:
-- no row is rewritten, and constraint and index names follow Prisma's defaults for the new column.

-- RenameColumn
ALTER TABLE "task_events" RENAME COLUMN "workflow_id" TO "task_id";
ALTER TABLE "task_steps" RENAME COLUMN "workflow_id" TO "task_id";
ALTER TABLE "approvals" RENAME COLUMN "workflow_id" TO "task_id";
ALTER TABLE "task_signals" RENAME COLUMN "workflow_id" TO "task_id";

-- RenameForeignKey
ALTER TABLE "task_steps" RENAME CONSTRAINT "task_steps_workflow_id_fkey" TO "task_steps_task_id_fkey";
ALTER TABLE "approvals" RENAME CONSTRAINT "approvals_workflow_id_fkey" TO "approvals_task_id_fkey";
ALTER TABLE "task_signals" RENAME CONSTRAINT "task_signals_workflow_id_fkey" TO "task_signals_task_id_fkey";

-- RenameIndex
ALTER INDEX "approvals_workflow_id_idx" RENAME TO "approvals_task_id_idx";
ALTER INDEX "task_signals_workflow_id_id_idx" RENAME TO "task_signals_task_id_id_idx";
