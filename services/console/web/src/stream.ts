import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { TaskEvent } from "./api.ts";

// Following one task's events live over SSE with fetch (EventSource cannot send the X-API-Key
// header, and keys never go in a URL). After a dropped connection it reconnects with the last
// id seen as Last-Event-ID, after the server's `retry:` (backing off with jitter while the
// stream is unreachable), drops any event it already delivered (by seq), and stops at the
// terminal event or when the server answers 204 (the task ended before the resume point).

export type StreamState = "connecting" | "open" | "reconnecting" | "ended" | "failed";

export interface FollowOptions {
  /** API base (`/api/v1` or an absolute URL). */
  baseUrl: string;
  taskId: string;
  /** Credential headers (X-API-Key). */
  headers: Record<string, string>;
  onEvent(event: TaskEvent): void;
  onState?(state: StreamState, detail?: string): void;
  signal?: AbortSignal;
  /** Resume after this seq (events already shown); 0 = from the start. */
  afterSeq?: number;
  fetch?: typeof fetch;
  /** Longest wait between two reconnects while the stream cannot be reached. */
  maxBackoffMs?: number;
  /**
   * A connection silent this long is given up and resumed: the server sends a keep-alive every
   * STREAM_KEEPALIVE_MS (15 s), so silence means a connection a proxy or the network lost.
   */
  idleTimeoutMs?: number;
}

/** An answer that a retry cannot change (bad request, unknown or foreign task, bad key). */
export class StreamRefusedError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = "StreamRefusedError";
    this.status = status;
  }
}

const DEFAULT_RETRY_MS = 1_000;

export function isTerminal(event: Pick<TaskEvent, "type" | "data">): boolean {
  return event.type === "WORKFLOW_COMPLETED" || (event.type === "ERROR_OCCURRED" && event.data?.terminal === true);
}

/** Resolves once the task's stream ended (terminal event or 204), rejects on a refusal; stops quietly when aborted. */
export async function followTaskEvents(options: FollowOptions): Promise<void> {
  const doFetch = options.fetch ?? globalThis.fetch.bind(globalThis);
  const maxBackoff = options.maxBackoffMs ?? 15_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 45_000;
  const signal = options.signal;
  let lastSeq = options.afterSeq ?? 0;
  // A numeric Last-Event-ID resumes after that seq (OpenAPI `streamSse`), so a page that already shows
  // events from the history starts right after them.
  let lastId: string | undefined = lastSeq > 0 ? String(lastSeq) : undefined;
  let retryMs = DEFAULT_RETRY_MS;
  let failures = 0;
  const state = (s: StreamState, detail?: string) => options.onState?.(s, detail);

  while (!signal?.aborted) {
    state(failures === 0 && lastId === undefined ? "connecting" : "reconnecting");
    const url = `${options.baseUrl.replace(/\/+$/, "")}/stream/sse?workflow_id=${encodeURIComponent(options.taskId)}`;
    let ended = false;
    // One controller per connection: the caller's abort and the idle watchdog both end it.
    const connection = new AbortController();
    const abort = () => connection.abort();
    signal?.addEventListener("abort", abort, { once: true });
    let idle: ReturnType<typeof setTimeout> | undefined;
    const watch = () => {
      clearTimeout(idle);
      idle = setTimeout(abort, idleTimeoutMs);
    };
    try {
      watch();
      const res = await doFetch(url, {
        headers: { Accept: "text/event-stream", ...options.headers, ...(lastId ? { "Last-Event-ID": lastId } : {}) },
        cache: "no-store",
        signal: connection.signal,
      });
      if (res.status === 204) {
        state("ended");
        return;
      }
      if (res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429) {
        const body = (await res.json().catch(() => ({}))) as { error?: string };
        const err = new StreamRefusedError(res.status, body.error ?? `HTTP ${res.status}`);
        state("failed", err.message);
        throw err;
      }
      if (!res.ok || !res.body) throw new Error(`HTTP ${res.status}`);
      state("open");
      failures = 0;
      const onMessage = (message: EventSourceMessage) => {
        const event = JSON.parse(message.data) as TaskEvent;
        if (typeof event.seq === "number") {
          if (event.seq <= lastSeq) return;
          lastSeq = event.seq;
        }
        options.onEvent(event);
        if (isTerminal(event)) ended = true;
      };
      // An `id:` without data (e.g. after a filtered-out event) still moves the resume point.
      const parser = createParser({ onEvent: onMessage, onId: (id) => (lastId = id), onRetry: (ms) => (retryMs = ms) });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        watch();
        parser.feed(decoder.decode(value, { stream: true }));
        if (ended) {
          await reader.cancel().catch(() => undefined);
          break;
        }
      }
    } catch (err) {
      if (err instanceof StreamRefusedError) throw err;
      if (signal?.aborted) return;
      failures++;
    } finally {
      clearTimeout(idle);
      signal?.removeEventListener("abort", abort);
    }
    if (ended) {
      state("ended");
      return;
    }
    // The server closed (deploy, proxy timeout) or could not be reached: wait, then resume.
    const base = failures === 0 ? retryMs : Math.min(maxBackoff, retryMs * 2 ** Math.min(failures - 1, 6));
    const wait = base / 2 + Math.random() * (base / 2);
    state("reconnecting", failures > 0 ? "connection lost" : undefined);
    await sleep(wait, signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
