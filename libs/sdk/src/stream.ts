import { createParser } from "eventsource-parser";
import { backoffDelay, sleep, type BackoffOptions } from "./backoff.ts";
import { abortError, ApiError, apiErrorFor, isAbortError, StreamError } from "./errors.ts";
import { toApiError, type Transport } from "./transport.ts";
import { isTerminalEvent, type EventType, type TogEvent } from "./types.ts";

// Resumable event streams (docs/api.md "Events and streams"). Both transports give the caller ONE
// gap-free sequence of a task's events across any number of reconnects:
//   - resume from the last event received (SSE: Last-Event-ID; WebSocket: last_event_id = seq),
//   - wait as the server's `retry:` says, then back off exponentially with jitter,
//   - drop duplicates by `seq` (delivery is at least once),
//   - end after the terminal event (WORKFLOW_COMPLETED, or ERROR_OCCURRED with data.terminal).
// With a `types` filter the terminal types are still requested from the server (and not shown
// unless asked for), so the stream always sees its end.

export type StreamTransport = "sse" | "ws";

export interface ReconnectInfo {
  /** Consecutive reconnects without a new event (1 for the first). */
  attempt: number;
  /** The resume point sent on reconnect. */
  lastEventId: string | undefined;
  delayMs: number;
  reason: string;
}

export interface StreamOptions {
  /** Only these event types are yielded (the stream still ends at the terminal event). */
  types?: readonly EventType[] | undefined;
  /** Resume after this point: a stream id `<millis>-<seq>` or a seq number. */
  lastEventId?: string | number | undefined;
  signal?: AbortSignal | undefined;
  /** `sse` (default) or `ws`. */
  transport?: StreamTransport | undefined;
  /** Reconnects in a row without receiving an event before giving up (default 30). */
  maxReconnects?: number | undefined;
  backoff?: BackoffOptions | undefined;
  /** Called before each reconnect. */
  onReconnect?: ((info: ReconnectInfo) => void) | undefined;
  /**
   * A connection that brings nothing (not even the server's keep-alive, every 15 s by default)
   * for this long is taken as dead and replaced (default 45 000 ms). Catches half-open
   * connections that never report an error.
   */
  idleTimeoutMs?: number | undefined;
  /** WebSocket constructor (default: globalThis.WebSocket). */
  WebSocket?: WebSocketConstructor | undefined;
}

/** The part of the WebSocket constructor we use; Node's (undici) also takes `{ headers }`. */
export type WebSocketConstructor = new (
  url: string,
  protocolsOrInit?: string | string[] | { headers?: Record<string, string> },
) => WebSocket;

const TERMINAL_TYPES: EventType[] = ["WORKFLOW_COMPLETED", "ERROR_OCCURRED"];
/** Errors a retry cannot fix: the stream fails with them at once. */
const FATAL = new Set([400, 401, 403, 404]);

function seqOf(id: string | number | undefined): number {
  if (id === undefined || id === "") return 0;
  if (typeof id === "number") return id;
  const m = /^(\d+)-(\d+)$/.exec(id);
  if (m) return Number(m[2]);
  const n = Number(id);
  return Number.isInteger(n) && n >= 0 ? n : 0;
}

function serverTypes(types: readonly EventType[] | undefined): string | undefined {
  if (!types || types.length === 0) return undefined;
  return [...new Set([...types, ...TERMINAL_TYPES])].join(",");
}

/** Position and filter shared by both transports. */
class Cursor {
  lastId: string | undefined;
  lastSeq: number;
  readonly #wanted: ReadonlySet<string> | null;

  constructor(options: StreamOptions) {
    this.lastId = options.lastEventId === undefined ? undefined : String(options.lastEventId);
    this.lastSeq = seqOf(options.lastEventId);
    this.#wanted = options.types && options.types.length > 0 ? new Set(options.types) : null;
  }

  /** Takes an event: null for a duplicate, else whether to show it and whether it ends the stream. */
  accept(event: TogEvent): { show: boolean; terminal: boolean } | null {
    if (typeof event.seq !== "number" || event.seq <= this.lastSeq) return null;
    this.lastSeq = event.seq;
    this.lastId = event.stream_id ?? String(event.seq);
    return { show: this.#wanted === null || this.#wanted.has(event.type), terminal: isTerminalEvent(event) };
  }
}

class Reconnects {
  attempt = 0;
  retryMs: number;
  readonly #options: StreamOptions;

  constructor(options: StreamOptions) {
    this.#options = options;
    this.retryMs = options.backoff?.initialMs ?? 1_000;
  }

  progressed(): void {
    this.attempt = 0;
  }

  async wait(cursor: Cursor, reason: string, retryAfterSeconds?: number): Promise<void> {
    this.attempt++;
    const max = this.#options.maxReconnects ?? 30;
    if (this.attempt > max) throw new StreamError(`Stream lost ${max} times in a row without progress (${reason})`);
    // The first reconnect waits what the server asked for (`retry:`); later ones back off.
    const delayMs =
      retryAfterSeconds !== undefined
        ? retryAfterSeconds * 1000
        : this.attempt === 1
          ? this.retryMs
          : backoffDelay(this.attempt, this.#options.backoff, this.retryMs);
    this.#options.onReconnect?.({ attempt: this.attempt, lastEventId: cursor.lastId, delayMs, reason });
    await sleep(delayMs, this.#options.signal);
  }
}

/** Server-Sent Events with automatic resume. */
export async function* sseEvents(
  transport: Transport,
  taskId: string,
  options: StreamOptions = {},
): AsyncGenerator<TogEvent, void, undefined> {
  const cursor = new Cursor(options);
  const reconnects = new Reconnects(options);
  const signal = options.signal;
  const url = transport.url("/api/v1/stream/sse", { workflow_id: taskId, types: serverTypes(options.types) });
  for (;;) {
    if (signal?.aborted) throw abortError(signal);
    const ctrl = new AbortController();
    const onAbort = () => ctrl.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    try {
      let res: Response;
      try {
        res = await transport.fetch(url, {
          headers: {
            Accept: "text/event-stream",
            ...(cursor.lastId !== undefined ? { "Last-Event-ID": cursor.lastId } : {}),
          },
          signal: ctrl.signal,
          cache: "no-store",
        });
      } catch (err) {
        if (signal?.aborted) throw abortError(signal);
        await reconnects.wait(cursor, (err as Error).message);
        continue;
      }
      // The task ended at or before the resume point: nothing more will come.
      if (res.status === 204) return;
      if (!res.ok || res.body === null) {
        const error = await toApiError(res, "GET", url);
        if (FATAL.has(error.status)) throw error;
        await reconnects.wait(cursor, `HTTP ${error.status}: ${error.message}`, error.retryAfter);
        continue;
      }
      const pending: TogEvent[] = [];
      const parser = createParser({
        onEvent: (message) => {
          if (message.data === "") return;
          try {
            pending.push(JSON.parse(message.data) as TogEvent);
          } catch {
            // not an event (the server only sends JSON data lines)
          }
        },
        onRetry: (ms) => {
          reconnects.retryMs = ms;
        },
      });
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const idleMs = options.idleTimeoutMs ?? 45_000;
      let idle = false;
      let reason = "the server ended the stream";
      try {
        for (;;) {
          const timer = setTimeout(() => {
            idle = true;
            ctrl.abort();
          }, idleMs);
          let chunk: Awaited<ReturnType<typeof reader.read>>;
          try {
            chunk = await reader.read();
          } finally {
            clearTimeout(timer);
          }
          if (chunk.done) break;
          parser.feed(chunk.value);
          while (pending.length > 0) {
            if (signal?.aborted) throw abortError(signal);
            const event = pending.shift()!;
            const taken = cursor.accept(event);
            if (taken === null) continue;
            reconnects.progressed();
            if (taken.show) yield event;
            if (taken.terminal) return;
          }
        }
      } catch (err) {
        if (signal?.aborted) throw abortError(signal);
        if (err instanceof ApiError) throw err;
        reason = idle ? `no data for ${idleMs} ms` : `connection lost: ${(err as Error).message}`;
      } finally {
        void reader.cancel().catch(() => undefined);
      }
      await reconnects.wait(cursor, reason);
    } finally {
      signal?.removeEventListener("abort", onAbort);
      ctrl.abort();
    }
  }
}

type WsItem =
  | { kind: "message"; data: string }
  | { kind: "open" }
  | { kind: "close"; code: number; reason: string }
  | { kind: "abort" };

/** A tiny push/pull queue between WebSocket callbacks and the generator. */
class Inbox {
  readonly #items: WsItem[] = [];
  #waiter: ((item: WsItem) => void) | undefined;

  push(item: WsItem): void {
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = undefined;
      w(item);
    } else this.#items.push(item);
  }

  next(): Promise<WsItem> {
    const item = this.#items.shift();
    if (item) return Promise.resolve(item);
    return new Promise((resolve) => (this.#waiter = resolve));
  }
}

/** The HTTP status a server close code 4400–4599 stands for (docs/decisions.md "WebSocket server messages"). */
function refusalStatus(code: number): number | undefined {
  return code >= 4400 && code <= 4599 ? code - 4000 : undefined;
}

/** Our own close item for a connection that brought nothing for too long (not a server code). */
const IDLE_CLOSE = 4000;

function isNode(): boolean {
  return typeof (globalThis as { process?: { versions?: { node?: string } } }).process?.versions?.node === "string";
}

/**
 * WebSocket with automatic resume: each (re)connect subscribes with the last seq received as
 * `last_event_id`. Browsers cannot set handshake headers, so there the credential is not sent
 * (fine with GATEWAY_SKIP_AUTH=1 or a same-origin proxy that adds it); Node sends X-API-Key.
 */
export async function* wsEvents(
  transport: Transport,
  taskId: string,
  options: StreamOptions = {},
): AsyncGenerator<TogEvent, void, undefined> {
  const Ws = options.WebSocket ?? (globalThis.WebSocket as unknown as WebSocketConstructor | undefined);
  if (!Ws) throw new TypeError("No WebSocket available: pass `WebSocket` in the stream options");
  const cursor = new Cursor(options);
  const reconnects = new Reconnects(options);
  const signal = options.signal;
  const url = transport.url("/api/v1/stream/ws").replace(/^http/, "ws");
  const types = serverTypes(options.types);
  for (;;) {
    if (signal?.aborted) throw abortError(signal);
    const inbox = new Inbox();
    const headers = transport.headers();
    const ws = isNode() && Object.keys(headers).length > 0 ? new Ws(url, { headers }) : new Ws(url);
    const onAbort = () => inbox.push({ kind: "abort" });
    signal?.addEventListener("abort", onAbort, { once: true });
    ws.onopen = () => {
      inbox.push({ kind: "open" });
      ws.send(
        JSON.stringify({
          type: "subscribe",
          workflow_id: taskId,
          ...(types ? { types } : {}),
          last_event_id: cursor.lastSeq,
        }),
      );
    };
    ws.onmessage = (e: MessageEvent) => inbox.push({ kind: "message", data: typeof e.data === "string" ? e.data : "" });
    ws.onerror = () => undefined;
    ws.onclose = (e: CloseEvent) => inbox.push({ kind: "close", code: e.code, reason: e.reason });
    let opened = false;
    let reason = "connection closed";
    // Browsers do not expose the server's WebSocket pings: after half the idle time without a
    // message we ping ourselves; a whole idle time without any message closes the connection.
    const idleMs = options.idleTimeoutMs ?? 45_000;
    let lastMessage = Date.now();
    const watchdog = setInterval(
      () => {
        const quiet = Date.now() - lastMessage;
        if (quiet >= idleMs) inbox.push({ kind: "close", code: IDLE_CLOSE, reason: `no data for ${idleMs} ms` });
        else if (quiet >= idleMs / 2 && ws.readyState === 1) ws.send('{"type":"ping"}');
      },
      Math.max(50, Math.floor(idleMs / 4)),
    );
    try {
      for (;;) {
        const item = await inbox.next();
        lastMessage = Date.now();
        if (signal?.aborted) throw abortError(signal);
        if (item.kind === "abort") throw abortError(signal!);
        if (item.kind === "open") {
          opened = true;
          continue;
        }
        if (item.kind === "close") {
          // The server refuses a message by closing with 4000 + the HTTP status (no error
          // messages, contract 4.10): 4400/4404 fail the stream, the rest is retried.
          const status = refusalStatus(item.code);
          if (status !== undefined && FATAL.has(status)) {
            throw apiErrorFor({
              status,
              message: item.reason || `Refused (${item.code})`,
              body: { error: item.reason, close_code: item.code },
              method: "GET",
              url,
            });
          }
          reason = `connection closed (${item.code}${item.reason ? ` ${item.reason}` : ""})`;
          break;
        }
        let message: { type?: unknown; seq?: unknown };
        try {
          message = JSON.parse(item.data) as typeof message;
        } catch {
          continue;
        }
        // Server messages are events and {"type":"pong"} only.
        if (typeof message.seq !== "number") continue;
        const event = message as unknown as TogEvent;
        const taken = cursor.accept(event);
        if (taken === null) continue;
        reconnects.progressed();
        if (taken.show) yield event;
        if (taken.terminal) return;
      }
    } finally {
      clearInterval(watchdog);
      signal?.removeEventListener("abort", onAbort);
      ws.onclose = null;
      ws.onmessage = null;
      try {
        ws.close(1000);
      } catch {
        // already closed
      }
    }
    // A refused handshake looks like any close (no status in the WebSocket API): ask over HTTP
    // whether the task exists for us, so a 401/404 fails the stream instead of retrying forever.
    if (!opened) {
      try {
        await transport.call(
          { method: "GET", path: `/api/v1/tasks/${encodeURIComponent(taskId)}`, safe: true },
          { signal },
        );
      } catch (err) {
        if (isAbortError(err) || (err instanceof ApiError && FATAL.has(err.status))) throw err;
      }
    }
    await reconnects.wait(cursor, reason);
  }
}
