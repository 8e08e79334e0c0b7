import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { firstEventTextOf, lastEventTextOf } from "@tog/events";

// Reads of one task's subject in the real-time cache (the EVENTS stream). nats-server 2.9
// has no batched direct get, so a range is read with a short-lived pull consumer (no acks, in
// memory, filtered to the subject, starting at a known stream sequence), which the server
// deletes by itself if we fail to. A message holds the events of one write, in seq order
// (docs/decisions.md "One message per write").

export interface StreamEntry {
  /** Stream sequence of the message. */
  streamSeq: number;
  /** Seq of the message's first event, as stated in its JSON (0 when unreadable). */
  seq: number;
  /** Seq of its last event (the same as `seq` for a message of one event). */
  lastSeq: number;
  text: string;
}

export interface RawEntry {
  streamSeq: number;
  text: string;
}

export interface JetStreamEventsOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  stream: string;
}

/** The seq stated in one event's text; 0 when it has none. */
export function eventSeqOf(text: string): number {
  try {
    const seq = (JSON.parse(text) as { seq?: unknown } | null)?.seq;
    return typeof seq === "number" && Number.isSafeInteger(seq) ? seq : 0;
  } catch {
    return 0;
  }
}

export class JetStreamEvents {
  readonly #js: JetStreamClient;
  readonly #jsm: JetStreamManager;
  readonly #stream: string;

  constructor(options: JetStreamEventsOptions) {
    this.#js = options.js;
    this.#jsm = options.jsm;
    this.#stream = options.stream;
  }

  /** The subject's first message at or after stream sequence `fromStreamSeq`, or null. */
  async nextOf(subject: string, fromStreamSeq = 0): Promise<StreamEntry | null> {
    // `next_by_subj` is understood by 2.9 servers; the client's type only lists seq/last_by_subj.
    const msg = await this.#jsm.streams.getMessage(this.#stream, {
      seq: fromStreamSeq,
      next_by_subj: subject,
    } as never);
    return msg ? entryOf(msg.seq, msg.string()) : null;
  }

  /** The subject's last message, or null when the cache holds none. */
  async lastOf(subject: string): Promise<StreamEntry | null> {
    const msg = await this.#jsm.streams.getMessage(this.#stream, { last_by_subj: subject });
    return msg ? entryOf(msg.seq, msg.string()) : null;
  }

  /**
   * Stream sequence of the first message of the subject that holds an event with a seq of at
   * least `seq`, searching [from.streamSeq, to.streamSeq]; per-subject seqs grow with stream sequences
   * (publishes are conditional on the subject's last sequence), so a binary search over
   * `next_by_subj` probes finds it in O(log n) round trips.
   */
  async locate(subject: string, seq: number, from: StreamEntry, to: StreamEntry): Promise<number | null> {
    if (from.lastSeq >= seq) return from.streamSeq;
    if (to.lastSeq < seq) return null;
    let lo = from.streamSeq + 1;
    let hi = to.streamSeq;
    let found = to.streamSeq;
    while (lo <= hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const probe = await this.nextOf(subject, mid);
      if (!probe) break;
      if (probe.lastSeq >= seq) {
        found = Math.min(found, probe.streamSeq);
        hi = mid - 1;
      } else {
        lo = probe.streamSeq + 1;
      }
    }
    return found;
  }

  /** Up to `max` messages of the subject from stream sequence `startStreamSeq` on, in order. */
  async read(subject: string, startStreamSeq: number, max: number): Promise<RawEntry[]> {
    const info = await this.#jsm.consumers.add(this.#stream, {
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: startStreamSeq,
      filter_subject: subject,
      mem_storage: true,
      num_replicas: 1,
      inactive_threshold: 30_000_000_000,
    });
    try {
      const wanted = Math.min(info.num_pending, max);
      if (wanted === 0) return [];
      const consumer = await this.#js.consumers.get(this.#stream, info.name);
      const out: RawEntry[] = [];
      const messages = await consumer.fetch({ max_messages: wanted, expires: 5_000 });
      for await (const m of messages) {
        out.push({ streamSeq: m.seq, text: m.string() });
        if (out.length >= wanted) break;
      }
      return out;
    } finally {
      this.#jsm.consumers.delete(this.#stream, info.name).catch(() => undefined);
    }
  }
}

function entryOf(streamSeq: number, text: string): StreamEntry {
  const first = firstEventTextOf(text);
  const seq = eventSeqOf(first);
  return { streamSeq, seq, lastSeq: first === text ? seq : eventSeqOf(lastEventTextOf(text)), text };
}
