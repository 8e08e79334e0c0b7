export {
  createEventHistoryRepository,
  type EventHistoryRepository,
  type EventPage,
  type ListEventsQuery,
  type StoredEvent,
} from "./event-history.repository.ts";
