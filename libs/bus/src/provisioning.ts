import { JetStreamApiError, type ConsumerConfig, type StreamConfig } from "@nats-io/jetstream";
import { ConfigError } from "@tog/core";
import type { Bus } from "./connection.ts";

// Streams and consumers are declared in code and converged at start-up: created when
// missing, updated when a mutable field differs, refused (ConfigError) when a field the
// server cannot change differs. Fields a definition leaves out converge to the server's
// defaults, so removing a setting from the code also removes it from the server.
// Written for nats-server 2.9: one filter_subject per consumer, no metadata.

export interface StreamDefinition {
  /** Full stream name (`bus.streamName("EVENTS")`). */
  name: string;
  description?: string;
  subjects: string[];
  retention: "limits" | "workqueue" | "interest";
  storage: "file" | "memory";
  /** 0 = keep forever (default). */
  maxAgeMs?: number;
  /** Msg-id dedupe window; default 2 min, capped at maxAge as the server requires. */
  duplicateWindowMs?: number;
  /** -1 = unlimited (default) for the four limits below. */
  maxMsgs?: number;
  maxBytes?: number;
  maxMsgSize?: number;
  maxMsgsPerSubject?: number;
  /** What happens at a limit: drop the oldest (default) or refuse the new message. */
  discard?: "old" | "new";
  replicas?: number;
}

/** A durable pull consumer. */
export interface ConsumerDefinition {
  stream: string;
  durable: string;
  description?: string;
  /** One subject filter (2.9 takes one); none = the whole stream. */
  filterSubject?: string;
  /** Default explicit. */
  ackPolicy?: "explicit" | "all" | "none";
  /** Default all. */
  deliverPolicy?: "all" | "new" | "last" | "last_per_subject";
  /** Default 30 s. */
  ackWaitMs?: number;
  /** -1 = redeliver until acked (default). */
  maxDeliver?: number;
  /** Default 1000. */
  maxAckPending?: number;
  /**
   * The server deletes the consumer once nobody has pulled from it for this long; unset or 0:
   * kept until deleted.
   */
  inactiveThresholdMs?: number;
}

/** `absent`: a consumer that does not exist and was not to be created (`create: false`). */
export type EnsureAction = "created" | "updated" | "unchanged" | "absent";

export interface EnsureResult {
  kind: "stream" | "consumer";
  /** Stream name, or the consumer's durable name. */
  name: string;
  /** The consumer's stream. */
  stream?: string;
  action: EnsureAction;
  /** Fields that were updated. */
  changes: string[];
}

const DEFAULT_DUPLICATE_WINDOW_MS = 120_000;
const NS_PER_MS = 1_000_000;

const API_STREAM_NOT_FOUND = 10059;
const API_CONSUMER_NOT_FOUND = 10014;

interface FieldRule {
  key: string;
  mutable: boolean;
  equal?: (a: unknown, b: unknown) => boolean;
}

const sameSet = (a: unknown, b: unknown) => {
  const x = [...((a as string[] | undefined) ?? [])].sort();
  const y = [...((b as string[] | undefined) ?? [])].sort();
  return x.length === y.length && x.every((v, i) => v === y[i]);
};
// The server omits empty strings and zero durations from the config it returns.
const sameText = (a: unknown, b: unknown) => (a ?? "") === (b ?? "");
const sameDuration = (a: unknown, b: unknown) => (a ?? 0) === (b ?? 0);

const STREAM_RULES: FieldRule[] = [
  { key: "retention", mutable: false },
  { key: "storage", mutable: false },
  { key: "subjects", mutable: true, equal: sameSet },
  { key: "description", mutable: true, equal: sameText },
  { key: "max_age", mutable: true },
  { key: "duplicate_window", mutable: true },
  { key: "max_msgs", mutable: true },
  { key: "max_bytes", mutable: true },
  { key: "max_msg_size", mutable: true },
  { key: "max_msgs_per_subject", mutable: true },
  { key: "discard", mutable: true },
  { key: "num_replicas", mutable: true },
];

const CONSUMER_RULES: FieldRule[] = [
  // A push consumer (deliver_subject set) under a pull definition's name cannot be converted.
  { key: "deliver_subject", mutable: false, equal: sameText },
  { key: "ack_policy", mutable: false },
  { key: "deliver_policy", mutable: false },
  { key: "filter_subject", mutable: true, equal: sameText },
  { key: "description", mutable: true, equal: sameText },
  { key: "ack_wait", mutable: true },
  { key: "max_deliver", mutable: true },
  { key: "max_ack_pending", mutable: true },
  { key: "inactive_threshold", mutable: true, equal: sameDuration },
];

export function streamConfigOf(def: StreamDefinition): Partial<StreamConfig> & { name: string } {
  const maxAgeMs = def.maxAgeMs ?? 0;
  const duplicateWindowMs =
    def.duplicateWindowMs ??
    (maxAgeMs > 0 ? Math.min(DEFAULT_DUPLICATE_WINDOW_MS, maxAgeMs) : DEFAULT_DUPLICATE_WINDOW_MS);
  return {
    name: def.name,
    description: def.description ?? "",
    subjects: [...def.subjects],
    retention: def.retention,
    storage: def.storage,
    max_age: maxAgeMs * NS_PER_MS,
    duplicate_window: duplicateWindowMs * NS_PER_MS,
    max_msgs: def.maxMsgs ?? -1,
    max_bytes: def.maxBytes ?? -1,
    max_msg_size: def.maxMsgSize ?? -1,
    max_msgs_per_subject: def.maxMsgsPerSubject ?? -1,
    discard: def.discard ?? "old",
    num_replicas: def.replicas ?? 1,
  };
}

export function consumerConfigOf(def: ConsumerDefinition): Partial<ConsumerConfig> {
  return {
    durable_name: def.durable,
    description: def.description ?? "",
    deliver_subject: "",
    filter_subject: def.filterSubject ?? "",
    ack_policy: def.ackPolicy ?? "explicit",
    deliver_policy: def.deliverPolicy ?? "all",
    ack_wait: (def.ackWaitMs ?? 30_000) * NS_PER_MS,
    max_deliver: def.maxDeliver ?? -1,
    max_ack_pending: def.maxAckPending ?? 1_000,
    inactive_threshold: (def.inactiveThresholdMs ?? 0) * NS_PER_MS,
  };
}

/** Creates or converges each stream; safe to run concurrently from several processes. */
export async function ensureStreams(bus: Bus, definitions: readonly StreamDefinition[]): Promise<EnsureResult[]> {
  const results: EnsureResult[] = [];
  for (const def of definitions) results.push(await ensureStream(bus, def));
  return results;
}

/**
 * Creates or converges each durable consumer; the streams must exist. `create: false` converges
 * only the consumers that exist (one that a process makes for itself, such as the event
 * persister's, given settings an earlier release did not set).
 */
export async function ensureConsumers(
  bus: Bus,
  definitions: readonly ConsumerDefinition[],
  options: { create?: boolean } = {},
): Promise<EnsureResult[]> {
  const results: EnsureResult[] = [];
  for (const def of definitions) results.push(await ensureConsumer(bus, def, options.create ?? true));
  return results;
}

async function ensureStream(bus: Bus, def: StreamDefinition): Promise<EnsureResult> {
  const desired = streamConfigOf(def);
  const what = `Stream "${def.name}"`;
  const result = (action: EnsureAction, changes: string[] = []): EnsureResult => ({
    kind: "stream",
    name: def.name,
    action,
    changes,
  });
  // Second pass only after losing a create race to another process.
  for (let attempt = 0; ; attempt++) {
    const current = await orUndefined(bus.jsm.streams.info(def.name), API_STREAM_NOT_FOUND);
    if (!current) {
      try {
        // Identical concurrent creates all succeed; a differing one fails and converges below.
        await bus.jsm.streams.add(desired);
        return result("created");
      } catch (err) {
        if (attempt === 0 && err instanceof JetStreamApiError) continue;
        throw new ConfigError(`${what} could not be created: ${messageOf(err)}`, { cause: err });
      }
    }
    const changes = diff(what, current.config as unknown as Record<string, unknown>, desired, STREAM_RULES);
    if (changes.length === 0) return result("unchanged");
    try {
      await bus.jsm.streams.update(def.name, pick(desired, changes));
    } catch (err) {
      throw new ConfigError(`${what} could not be updated (${changes.join(", ")}): ${messageOf(err)}`, { cause: err });
    }
    return result("updated", changes);
  }
}

async function ensureConsumer(bus: Bus, def: ConsumerDefinition, create: boolean): Promise<EnsureResult> {
  const desired = consumerConfigOf(def);
  const what = `Consumer "${def.durable}" on stream "${def.stream}"`;
  const result = (action: EnsureAction, changes: string[] = []): EnsureResult => ({
    kind: "consumer",
    name: def.durable,
    stream: def.stream,
    action,
    changes,
  });
  // The client puts filter_subject into the create API subject, so empty strings must not be sent.
  const createConfig = Object.fromEntries(
    Object.entries(desired).filter(([, v]) => v !== ""),
  ) as Partial<ConsumerConfig>;
  for (let attempt = 0; ; attempt++) {
    let current: Awaited<ReturnType<typeof bus.jsm.consumers.info>> | undefined;
    try {
      current = await orUndefined(bus.jsm.consumers.info(def.stream, def.durable), API_CONSUMER_NOT_FOUND);
    } catch (err) {
      if (isApiError(err, API_STREAM_NOT_FOUND)) {
        throw new ConfigError(`${what}: the stream does not exist (ensure streams first)`, { cause: err });
      }
      throw err;
    }
    if (!current && !create) return result("absent");
    if (!current) {
      try {
        await bus.jsm.consumers.add(def.stream, createConfig);
        return result("created");
      } catch (err) {
        if (attempt === 0 && err instanceof JetStreamApiError) continue;
        throw new ConfigError(`${what} could not be created: ${messageOf(err)}`, { cause: err });
      }
    }
    const changes = diff(what, current.config as unknown as Record<string, unknown>, desired, CONSUMER_RULES);
    if (changes.length === 0) return result("unchanged");
    try {
      await bus.jsm.consumers.update(def.stream, def.durable, pick(desired, changes));
    } catch (err) {
      throw new ConfigError(`${what} could not be updated (${changes.join(", ")}): ${messageOf(err)}`, { cause: err });
    }
    return result("updated", changes);
  }
}

/** Names of the fields that differ; throws ConfigError when one of them is immutable. */
function diff(
  what: string,
  current: Record<string, unknown>,
  desired: Record<string, unknown>,
  rules: FieldRule[],
): string[] {
  const changed: string[] = [];
  for (const rule of rules) {
    if (!(rule.key in desired)) continue;
    const want = desired[rule.key];
    const have = current[rule.key];
    const equal = rule.equal ? rule.equal(have, want) : have === want;
    if (equal) continue;
    if (!rule.mutable) {
      throw new ConfigError(
        `${what}: field "${rule.key}" cannot be changed on an existing ${what.startsWith("Stream") ? "stream" : "consumer"} ` +
          `(server has ${JSON.stringify(have ?? null)}, definition wants ${JSON.stringify(want)}); ` +
          `delete it or revert the definition`,
      );
    }
    changed.push(rule.key);
  }
  return changed;
}

function pick<T extends object>(source: T, keys: string[]): Partial<T> {
  const out: Record<string, unknown> = {};
  for (const k of keys) out[k] = (source as Record<string, unknown>)[k];
  return out as Partial<T>;
}

async function orUndefined<T>(promise: Promise<T>, notFoundCode: number): Promise<T | undefined> {
  try {
    return await promise;
  } catch (err) {
    if (isApiError(err, notFoundCode)) return undefined;
    throw err;
  }
}

function isApiError(err: unknown, code: number): boolean {
  return err instanceof JetStreamApiError && err.code === code;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
