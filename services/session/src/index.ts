export {
  createSessionApp,
  createSessionDocs,
  SESSION_SERVICE_VERSION,
  type SessionApp,
  type SessionAppOptions,
} from "./app.ts";
export { loadSessionConfig, sessionConfigShape, type SessionConfig } from "./config.ts";
export { registerSessionRoutes, type SessionRoutesContext } from "./sessions/session.routes.ts";
export { SessionService, SESSION_NOT_FOUND, type SessionServiceOptions } from "./sessions/session.service.ts";
export { SessionRepository, type SessionRecord, type SessionTaskRecord } from "@tog/task-data";
export { SessionCache, type SessionCacheOptions } from "./sessions/session-cache.ts";
export { startChangeFeed, type ChangeFeed, type ChangeFeedOptions } from "./sessions/change-feed.ts";
export {
  startSessionRetention,
  SESSION_RETENTION_LOCK_KEY,
  type SessionRetentionJob,
  type SessionRetentionOptions,
} from "./sessions/retention.ts";
export { cleanTitle, validTitle, TITLE_MAX_CHARS } from "./sessions/title.ts";
