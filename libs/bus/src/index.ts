export { busConfigShape, NATS_PREFIX_PATTERN, topologyOptionsOf } from "./config.ts";
export { connectBus, type Bus, type BusOptions } from "./connection.ts";
export { streamNameFor, subjectFor } from "./naming.ts";
export {
  consumerConfigOf,
  ensureConsumers,
  ensureStreams,
  streamConfigOf,
  type ConsumerDefinition,
  type EnsureAction,
  type EnsureResult,
  type StreamDefinition,
} from "./provisioning.ts";
export {
  DUPLICATE_WINDOW_MS,
  EVENT_PERSISTER,
  EVENT_PERSISTER_INACTIVE_MS,
  RUN_WORKERS,
  eventPersisterConsumer,
  eventsStream,
  runWorkersConsumer,
  runsStream,
  systemSubjects,
  systemTopology,
  type TopologyOptions,
} from "./streams.ts";
export {
  encodePayload,
  messageHeaders,
  publish,
  publishCore,
  publishSessionChanged,
  type CorePublishOptions,
  type Payload,
  type PublishOptions,
  type PubAck,
} from "./publish.ts";
export { extractMessageContext, withMessageContext, type ReceivedMessage } from "./message-context.ts";
