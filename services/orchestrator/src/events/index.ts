export { eventsConfigShape } from "./config.ts";
export {
  startEventPersister,
  type EventPersister,
  type EventPersisterMetrics,
  type EventPersisterOptions,
} from "./event-persister.ts";
export { eventRowOf, toEventRow, toEventRows, type EventRow, type EventRowResult } from "./event-row.ts";
export { eventColumns, insertEventRows } from "./event.repository.ts";
export {
  createEventHistoryRepository,
  type EventHistoryRepository,
  type EventPage,
  type ListEventsQuery,
  type StoredEvent,
} from "@tog/event-log";
export { buildTimeline, type BuildTimelineOptions } from "./timeline.ts";
export {
  EVENT_RETENTION_LOCK_KEY,
  startRetentionJob,
  type RetentionJob,
  type RetentionJobOptions,
  type RetentionRunResult,
} from "./retention.ts";
export { isDataError, sqlStateOf } from "./pg-errors.ts";
