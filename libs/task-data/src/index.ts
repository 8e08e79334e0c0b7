// The orchestrator's tables (docs/architecture.md "Tables") as the other services may use them:
// the session service's reads and writes of sessions, their tasks and events, and its retention
// purge; the stream service's owner check. The orchestrator's own statements stay in its
// repositories.
export {
  SessionRepository,
  type SessionRecord,
  type SessionTaskRecord,
  type TurnEventRecord,
} from "./session.repository.ts";
export { purgeIdleSessions, type PurgedBatch } from "./session-retention.repository.ts";
export { findTaskOwner } from "./task-owner.repository.ts";
