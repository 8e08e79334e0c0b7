-- CreateTable
CREATE TABLE "sessions" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "external_id" VARCHAR(255),
    "title" VARCHAR(255),
    "context" JSONB NOT NULL DEFAULT '{}',
    "token_budget" INTEGER NOT NULL,
    "tokens_used" INTEGER NOT NULL DEFAULT 0,
    "task_count" INTEGER NOT NULL DEFAULT 0,
    "total_cost_usd" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_activity_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "deleted_at" TIMESTAMPTZ(3),
    "deleted_by" UUID,

    CONSTRAINT "sessions_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "tasks" (
    "id" UUID NOT NULL,
    "user_id" UUID NOT NULL,
    "session_id" UUID NOT NULL,
    "query" TEXT NOT NULL,
    "requested_mode" VARCHAR(16),
    "mode" VARCHAR(32),
    "status" VARCHAR(16) NOT NULL,
    "spec" JSONB NOT NULL,
    "result" TEXT,
    "error" TEXT NOT NULL DEFAULT '',
    "error_type" VARCHAR(32),
    "model_used" VARCHAR(128),
    "provider" VARCHAR(64),
    "input_tokens" INTEGER,
    "output_tokens" INTEGER,
    "total_tokens" INTEGER,
    "cost_usd" DOUBLE PRECISION,
    "trace_id" CHAR(32) NOT NULL,
    "traceparent" VARCHAR(64),
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "lease_owner" VARCHAR(128),
    "lease_expires_at" TIMESTAMPTZ(3),
    "cancel_requested_at" TIMESTAMPTZ(3),
    "cancel_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "started_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "deadline_at" TIMESTAMPTZ(3),

    CONSTRAINT "tasks_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "task_events" (
    "workflow_id" UUID NOT NULL,
    "seq" INTEGER NOT NULL,
    "type" VARCHAR(32) NOT NULL,
    "agent_id" VARCHAR(128) NOT NULL,
    "timestamp" TIMESTAMPTZ(3) NOT NULL,
    "event" JSON NOT NULL,
    "stored_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_events_pkey" PRIMARY KEY ("workflow_id","seq")
);

-- CreateTable
CREATE TABLE "task_steps" (
    "workflow_id" UUID NOT NULL,
    "key" VARCHAR(255) NOT NULL,
    "kind" VARCHAR(16) NOT NULL,
    "name" VARCHAR(255) NOT NULL,
    "agent_id" VARCHAR(128) NOT NULL,
    "status" VARCHAR(16) NOT NULL,
    "attempt" INTEGER NOT NULL DEFAULT 1,
    "output" JSONB,
    "events" JSON,
    "first_seq" INTEGER,
    "last_seq" INTEGER,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "task_steps_pkey" PRIMARY KEY ("workflow_id","key")
);

-- CreateTable
CREATE TABLE "approvals" (
    "id" VARCHAR(64) NOT NULL,
    "workflow_id" UUID NOT NULL,
    "status" VARCHAR(16) NOT NULL,
    "tool_name" VARCHAR(128) NOT NULL,
    "operation" TEXT NOT NULL,
    "risk_level" VARCHAR(16) NOT NULL,
    "details" JSONB NOT NULL DEFAULT '{}',
    "timeout_seconds" INTEGER NOT NULL,
    "requested_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expires_at" TIMESTAMPTZ(3) NOT NULL,
    "decided_at" TIMESTAMPTZ(3),
    "decided_by" VARCHAR(255),
    "comments" TEXT,
    "modified_action" TEXT,
    "run_id" VARCHAR(255),

    CONSTRAINT "approvals_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "task_signals" (
    "id" BIGSERIAL NOT NULL,
    "workflow_id" UUID NOT NULL,
    "name" VARCHAR(32) NOT NULL,
    "payload" JSONB NOT NULL DEFAULT '{}',
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "task_signals_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "sessions_external_id_key" ON "sessions"("external_id");

-- CreateIndex
CREATE INDEX "sessions_user_id_last_activity_at_idx" ON "sessions"("user_id", "last_activity_at");

-- CreateIndex
CREATE INDEX "tasks_user_id_created_at_idx" ON "tasks"("user_id", "created_at");

-- CreateIndex
CREATE INDEX "tasks_session_id_created_at_idx" ON "tasks"("session_id", "created_at");

-- CreateIndex
CREATE INDEX "tasks_status_created_at_idx" ON "tasks"("status", "created_at");

-- CreateIndex
CREATE INDEX "task_events_timestamp_idx" ON "task_events"("timestamp");

-- CreateIndex
CREATE INDEX "approvals_workflow_id_idx" ON "approvals"("workflow_id");

-- CreateIndex
CREATE INDEX "task_signals_workflow_id_id_idx" ON "task_signals"("workflow_id", "id");

-- AddForeignKey
ALTER TABLE "sessions" ADD CONSTRAINT "sessions_user_id_fkey" FOREIGN KEY ("user_id") REFERENCES "users"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "tasks" ADD CONSTRAINT "tasks_session_id_fkey" FOREIGN KEY ("session_id") REFERENCES "sessions"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "task_steps" ADD CONSTRAINT "task_steps_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "approvals" ADD CONSTRAINT "approvals_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "task_signals" ADD CONSTRAINT "task_signals_workflow_id_fkey" FOREIGN KEY ("workflow_id") REFERENCES "tasks"("id") ON DELETE CASCADE ON UPDATE CASCADE;
