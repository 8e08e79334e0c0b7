import { streamNameFor, subjectFor } from "./naming.ts";
import type { ConsumerDefinition, StreamDefinition } from "./provisioning.ts";

// The system's subjects, streams and durable consumers, as functions of the prefix.
//
//   <prefix>.events.<workflow_id>   EVENTS  (limits, file, max_age = EVENTS_MAX_AGE_SECONDS)
//                                   consumer "event-persister": all events, explicit ack; made
//                                   by the orchestrator only while it runs the persister
//   <prefix>.runs.<workflow_id>     RUNS    (work queue, file)
//                                   consumer "run-workers": explicit ack, unlimited redelivery

export interface TopologyOptions {
  prefix: string;
  /** EVENTS retention; default 3600 s. */
  eventsMaxAgeSeconds?: number;
  /** How long a worker may hold a run without a heartbeat before it is redelivered; default 3 s. */
  runAckWaitSeconds?: number;
  /** Runs the queue holds before refusing new ones (submit answers 503); default 1,000,000. */
  runsMaxPending?: number;
  /** Copies of each stream in a JetStream cluster (1, or 3 to survive the loss of a server); default 1. */
  replicas?: number;
}

/** Msg-id dedupe window of both streams. */
export const DUPLICATE_WINDOW_MS = 120_000;

export const EVENT_PERSISTER = "event-persister";
export const RUN_WORKERS = "run-workers";

export function systemSubjects(prefix: string) {
  return {
    /** Events of one task, in order. */
    events: (taskId: string) => subjectFor(prefix, ["events", taskId]),
    allEvents: subjectFor(prefix, ["events", ">"]),
    /** Runs of one task, waiting for a worker. */
    runs: (taskId: string) => subjectFor(prefix, ["runs", taskId]),
    allRuns: subjectFor(prefix, ["runs", ">"]),
    /** Core NATS wake-up hint for the worker running a task (the signal itself is in PostgreSQL). */
    signals: (taskId: string) => subjectFor(prefix, ["signals", taskId]),
    /**
     * Core NATS hint that a session or one of its tasks changed (payload: the session id), sent
     * after commit by every writer; the session service drops its cached views of that session.
     */
    sessionChanges: subjectFor(prefix, ["sessions", "changed"]),
  };
}

export function eventsStream(options: TopologyOptions): StreamDefinition {
  return {
    name: streamNameFor(options.prefix, "EVENTS"),
    description: "Task events: the real-time replay window; the database keeps the full history.",
    subjects: [systemSubjects(options.prefix).allEvents],
    retention: "limits",
    storage: "file",
    maxAgeMs: (options.eventsMaxAgeSeconds ?? 3_600) * 1_000,
    duplicateWindowMs: Math.min(DUPLICATE_WINDOW_MS, (options.eventsMaxAgeSeconds ?? 3_600) * 1_000),
    discard: "old",
    replicas: options.replicas ?? 1,
  };
}

export function runsStream(options: TopologyOptions): StreamDefinition {
  return {
    name: streamNameFor(options.prefix, "RUNS"),
    description: "Task runs waiting for a worker; a run leaves the stream when a worker acks it.",
    subjects: [systemSubjects(options.prefix).allRuns],
    retention: "workqueue",
    storage: "file",
    duplicateWindowMs: DUPLICATE_WINDOW_MS,
    // Never drop queued work silently: with a limit, refuse new runs instead.
    discard: "new",
    maxMsgs: options.runsMaxPending ?? 1_000_000,
    replicas: options.replicas ?? 1,
  };
}

export const DEFAULT_RUN_ACK_WAIT_SECONDS = 3;

/** Durable pull consumer shared by all workers (each run goes to one worker). */
export function runWorkersConsumer(options: TopologyOptions): ConsumerDefinition {
  return {
    stream: streamNameFor(options.prefix, "RUNS"),
    durable: RUN_WORKERS,
    description: "Workers executing task runs.",
    filterSubject: systemSubjects(options.prefix).allRuns,
    ackPolicy: "explicit",
    deliverPolicy: "all",
    // A worker that holds a run longer must call msg.working() to extend it. Short, so a crashed
    // worker's runs are redelivered within seconds (docs/reliability.md "Worker crash").
    ackWaitMs: (options.runAckWaitSeconds ?? DEFAULT_RUN_ACK_WAIT_SECONDS) * 1_000,
    // Unlimited: a run is never dropped because PostgreSQL was down for a while (each failed
    // delivery is nak'd with a growing delay) or because duplicate deliveries met a live lease.
    maxDeliver: -1,
    maxAckPending: 1_000,
  };
}

/** Unread this long, the event persister's consumer is deleted by the server. */
export const EVENT_PERSISTER_INACTIVE_MS = 10 * 60_000;

/**
 * Durable pull consumer that copies every event to the database: the event persister's, read
 * only during an upgrade from workers that did not log their events (docs/decisions.md "Event
 * log"). Not part of the system's topology: a durable consumer nobody reads fails a NATS
 * cluster's health check ("consumer is not current"), so the orchestrator makes it when it
 * starts the persister, and the server deletes it once no persister has pulled for
 * EVENT_PERSISTER_INACTIVE_MS (the upgrade is over). A persister started later makes it again
 * and reads the stream from its start: the rows it already stored are skipped, and a message
 * the stream aged out meanwhile was gone for a kept consumer too.
 */
export function eventPersisterConsumer(options: TopologyOptions): ConsumerDefinition {
  return {
    stream: streamNameFor(options.prefix, "EVENTS"),
    durable: EVENT_PERSISTER,
    description: "Persists task events to the database.",
    filterSubject: systemSubjects(options.prefix).allEvents,
    ackPolicy: "explicit",
    deliverPolicy: "all",
    ackWaitMs: 30_000,
    // Persisting must not give up on an event; failures are retried until they succeed.
    maxDeliver: -1,
    maxAckPending: 1_000,
    inactiveThresholdMs: EVENT_PERSISTER_INACTIVE_MS,
  };
}

/** Every stream and consumer the system needs, in creation order. */
export function systemTopology(options: TopologyOptions): {
  streams: StreamDefinition[];
  consumers: ConsumerDefinition[];
} {
  return {
    streams: [eventsStream(options), runsStream(options)],
    consumers: [runWorkersConsumer(options)],
  };
}
