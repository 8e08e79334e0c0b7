export { createStreamApp, type StreamApp, type StreamAppOptions } from "./app.ts";
export { loadStreamConfig, streamConfigShape, type StreamConfig } from "./config.ts";
export { HubRegistry, type HubRegistryOptions } from "./hub/hub-registry.ts";
export { TaskHub, type HubSubscriber, type TaskHubOptions } from "./hub/task-hub.ts";
export { decodeHubEvent, type HubEvent } from "./hub/hub-event.ts";
export { replayAndAttach, Subscription, type Sink } from "./hub/subscription.ts";
export { createTaskOwners, assertOwner, type TaskOwners } from "./ownership.ts";
export { createEventStore, type EventStore, type StorePosition } from "./store/event-store.ts";
export { JetStreamEvents } from "./store/jetstream-events.ts";
export { parseClientMessage, type ClientMessage } from "./ws/ws-protocol.ts";
export {
  closeReason,
  refusalCode,
  CLOSE_INTERNAL,
  CLOSE_REFUSED_BASE,
  CLOSE_RESTART,
  CLOSE_SLOW_CONSUMER,
} from "./ws/ws-close.ts";
export { streamRequestFromQuery, type StreamRequest } from "./stream-request.ts";
export { STREAM_VERSION } from "./version.ts";
