import { randomUUID } from "node:crypto";
import type http from "node:http";
import WebSocket from "ws";
import { connectBus, publish, systemSubjects, type Bus } from "@tog/bus";
import { createLogger } from "@tog/core";
import { buildEvent, eventMessageId, WORKFLOW_AGENT_ID, type TaskEvent } from "@tog/events";
import type { E2eEnvironment } from "@tog/tests-e2e";

// Stream clients as applications write them (a fetch-based SSE reader, a `ws` client), and a
// stand-in worker that publishes a task's events exactly as workers do, for tests that need
// event sequences of a chosen length and pace.

export type Json = Record<string, any>;

export interface SseFrame {
  id?: string;
  event?: string;
  data?: string;
  retry?: number;
  comments: string[];
}

/** A minimal spec-following SSE reader over fetch; keeps every frame it parsed. */
export class SseClient {
  readonly url: string;
  status = 0;
  headers: Headers | undefined;
  body = "";
  readonly frames: SseFrame[] = [];
  /** Settles when the response ended (by the server) or was aborted. */
  readonly done: Promise<"ended" | "aborted" | "error">;
  readonly #controller = new AbortController();
  #waiters: (() => void)[] = [];
  #lastId: string | undefined;

  constructor(url: string, headers: Record<string, string> = {}) {
    this.url = url;
    this.done = this.#run(headers);
  }

  /** The `Last-Event-ID` a reconnecting client sends: the last `id:` seen. */
  get lastId(): string | undefined {
    return this.#lastId;
  }

  /** Parsed `data` of every event frame. */
  get events(): Json[] {
    return this.frames.filter((f) => f.data !== undefined).map((f) => JSON.parse(f.data!) as Json);
  }

  get seqs(): number[] {
    return this.events.map((e) => e.seq as number);
  }

  async #run(headers: Record<string, string>): Promise<"ended" | "aborted" | "error"> {
    try {
      const res = await fetch(this.url, {
        headers: { Accept: "text/event-stream", ...headers },
        signal: this.#controller.signal,
      });
      this.status = res.status;
      this.headers = res.headers;
      if (!res.body || !(res.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
        this.body = await res.text();
        return "ended";
      }
      const decoder = new TextDecoder();
      let buffer = "";
      let frame: SseFrame = { comments: [] };
      let touched = false;
      for await (const chunk of res.body) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line === "") {
            if (touched) {
              if (frame.id !== undefined) this.#lastId = frame.id;
              this.frames.push(frame);
              this.#notify();
            }
            frame = { comments: [] };
            touched = false;
            continue;
          }
          touched = true;
          if (line.startsWith(":")) {
            frame.comments.push(line.slice(1).trim());
            continue;
          }
          const colon = line.indexOf(":");
          const field = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
          if (field === "id") frame.id = value;
          else if (field === "event") frame.event = value;
          else if (field === "data") frame.data = frame.data === undefined ? value : `${frame.data}\n${value}`;
          else if (field === "retry") frame.retry = Number(value);
        }
      }
      return "ended";
    } catch (err) {
      return this.#controller.signal.aborted ? "aborted" : (void err, "error");
    } finally {
      this.#notify();
    }
  }

  #notify(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const w of waiters) w();
  }

  /** Resolves once `check` holds (checked after every frame). */
  async waitFor(check: (c: SseClient) => boolean, timeoutMs = 15_000, what = "condition"): Promise<void> {
    const end = Date.now() + timeoutMs;
    let finished = false;
    void this.done.then(() => (finished = true));
    while (!check(this)) {
      if (Date.now() > end)
        throw new Error(`SSE ${this.url}: timed out waiting for ${what} (got seqs ${this.seqs.join(",")})`);
      if (finished) {
        await Promise.resolve();
        if (check(this)) return;
        throw new Error(`SSE ${this.url}: stream ended before ${what} (got seqs ${this.seqs.join(",")})`);
      }
      await new Promise<void>((resolve) => {
        this.#waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }

  close(): void {
    this.#controller.abort();
  }
}

/** A WebSocket client that records every message. */
export class WsClient {
  readonly ws: WebSocket;
  readonly messages: Json[] = [];
  readonly opened: Promise<void>;
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Headers of the 101 that opened the connection. */
  upgradeHeaders: http.IncomingHttpHeaders | undefined;
  /** Status and headers of a refused handshake. */
  refusedStatus: number | undefined;
  refusedHeaders: http.IncomingHttpHeaders | undefined;
  refusedBody = "";

  constructor(url: string, headers: Record<string, string> = {}) {
    this.ws = new WebSocket(url, { headers });
    this.ws.on("message", (data) => this.messages.push(JSON.parse(data.toString()) as Json));
    this.ws.once("upgrade", (res) => (this.upgradeHeaders = res.headers));
    this.opened = new Promise((resolve, reject) => {
      this.ws.once("open", () => resolve());
      this.ws.once("unexpected-response", (_req, res) => {
        this.refusedStatus = res.statusCode;
        this.refusedHeaders = res.headers;
        res.on("data", (c: Buffer) => (this.refusedBody += c.toString()));
        res.on("end", () => {
          // With this listener, aborting is ours to do (ws then emits error and close).
          this.ws.terminate();
          reject(new Error(`handshake refused: ${res.statusCode}`));
        });
      });
      this.ws.once("error", reject);
    });
    this.opened.catch(() => undefined);
    this.closed = new Promise((resolve) =>
      this.ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
  }

  send(message: Json | string): void {
    this.ws.send(typeof message === "string" ? message : JSON.stringify(message));
  }

  /** Event messages (they carry a seq) of one task. */
  events(taskId?: string): Json[] {
    return this.messages.filter((m) => typeof m.seq === "number" && (taskId === undefined || m.workflow_id === taskId));
  }

  async waitFor(check: (c: WsClient) => boolean, timeoutMs = 15_000, what = "condition"): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!check(this)) {
      if (Date.now() > end)
        throw new Error(`WebSocket: timed out waiting for ${what}; got ${JSON.stringify(this.messages.slice(-5))}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async waitForMessage(match: (m: Json) => boolean, timeoutMs = 15_000): Promise<Json> {
    let found: Json | undefined;
    await this.waitFor(() => (found = this.messages.find(match)) !== undefined, timeoutMs, "a matching message");
    return found!;
  }

  close(): void {
    this.ws.close();
  }
}

/** Publishes one task's events as a worker does: JetStream, msg id, conditional on the subject's last sequence. */
export class EventPublisher {
  readonly taskId: string;
  readonly #bus: Bus;
  #lastStreamSeq = 0;
  seq = 0;
  readonly published: TaskEvent[] = [];

  constructor(bus: Bus, taskId: string) {
    this.#bus = bus;
    this.taskId = taskId;
  }

  async emit(count: number, options: { last?: boolean; delayMs?: number } = {}): Promise<void> {
    for (let i = 0; i < count; i++) {
      const seq = ++this.seq;
      const last = options.last === true && i === count - 1;
      const event = last
        ? buildEvent({
            workflow_id: this.taskId,
            type: "WORKFLOW_COMPLETED",
            agent_id: WORKFLOW_AGENT_ID,
            message: "Workflow completed",
            seq,
            trace_id: TRACE_ID,
            data: {
              result: "done",
              duration_ms: 1,
              total_tokens: 1,
              total_cost_usd: 0,
              agents_used: 1,
              tools_invoked: 0,
            },
          })
        : seq % 4 === 0
          ? buildEvent({
              workflow_id: this.taskId,
              type: "PROGRESS",
              agent_id: "agent-1",
              message: `step ${seq}`,
              seq,
              trace_id: TRACE_ID,
              data: { percentage: 10, current_step: seq, total_steps: 1000, current_task: "t" },
            })
          : buildEvent({
              workflow_id: this.taskId,
              type: "LLM_PARTIAL",
              agent_id: "agent-1",
              message: "",
              seq,
              trace_id: TRACE_ID,
              data: { chunk: `chunk ${seq} ✓`, chunk_index: seq, total_tokens_so_far: seq },
            });
      await this.#publish(event);
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    }
  }

  /** One LLM_PARTIAL carrying `chunk` (large chunks fill slow clients' buffers quickly). */
  async emitChunk(chunk: string): Promise<void> {
    const seq = ++this.seq;
    await this.#publish(
      buildEvent({
        workflow_id: this.taskId,
        type: "LLM_PARTIAL",
        agent_id: "agent-1",
        message: "",
        seq,
        trace_id: TRACE_ID,
        data: { chunk, chunk_index: seq, total_tokens_so_far: seq },
      }),
    );
  }

  async #publish(event: TaskEvent): Promise<void> {
    const ack = await publish(
      this.#bus,
      systemSubjects(this.#bus.prefix).events(this.taskId),
      new TextEncoder().encode(JSON.stringify(event)),
      {
        msgID: eventMessageId(event),
        expect: { lastSubjectSequence: this.#lastStreamSeq },
      },
    );
    this.#lastStreamSeq = ack.seq;
    this.published.push(event);
  }
}

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

export async function openEnvBus(env: E2eEnvironment): Promise<Bus> {
  return connectBus({
    url: env.infra.natsUrl,
    name: "e2e-stream",
    prefix: env.natsPrefix,
    logger: createLogger({ service: "e2e", level: "silent" }),
  });
}

/** A task row owned by the key's user, via the public API (no worker runs it: the test publishes its events). */
export async function createTask(baseUrl: string, key: string | undefined): Promise<string> {
  const res = await fetch(`${baseUrl}/tasks`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...(key ? { "X-API-Key": key } : {}) },
    body: JSON.stringify({ query: `stream test ${randomUUID()}` }),
  });
  const body = (await res.json()) as Json;
  if (res.status !== 200) throw new Error(`submit failed: ${res.status} ${JSON.stringify(body)}`);
  return body.task_id as string;
}

export const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

export function sseUrl(baseUrl: string, query: Record<string, string>): string {
  return `${baseUrl}/stream/sse?${new URLSearchParams(query).toString()}`;
}

export function wsUrl(baseUrl: string, query: Record<string, string> = {}): string {
  const q = new URLSearchParams(query).toString();
  return `${baseUrl.replace(/^http/, "ws")}/stream/ws${q ? `?${q}` : ""}`;
}

export interface Connection {
  /** Resume point sent (seq). */
  resumeAfter: number;
  seqs: number[];
  /** When the connection was opened (ms since the epoch): how long a resumption took. */
  openedAt?: number;
}

/**
 * What an application does with SSE: read until the stream ends, then reconnect with the last
 * id seen (as Last-Event-ID), retrying while no instance answers, until the terminal event.
 * Keeps each connection's seqs apart so tests can check every one of them for gaps.
 */
export async function followSse(options: {
  url: () => string;
  headers: Record<string, string>;
  timeoutMs?: number;
}): Promise<{ connections: Connection[]; events: Json[] }> {
  const end = Date.now() + (options.timeoutMs ?? 30_000);
  const connections: Connection[] = [];
  const events: Json[] = [];
  let lastId: string | undefined;
  for (;;) {
    if (Date.now() > end)
      throw new Error(
        `followSse: no terminal event; connections: ${JSON.stringify(connections.map((c) => c.seqs.length))}`,
      );
    const resumeAfter = lastId ? Number(lastId.split("-")[1]) : 0;
    const openedAt = Date.now();
    const client = new SseClient(options.url(), { ...options.headers, ...(lastId ? { "Last-Event-ID": lastId } : {}) });
    await client.done;
    if (client.status === 204) break;
    const seen = client.events;
    connections.push({ resumeAfter, seqs: seen.map((e) => e.seq as number), openedAt });
    events.push(...seen);
    lastId = client.lastId ?? lastId;
    const last = seen.at(-1);
    if (
      last &&
      (last.type === "WORKFLOW_COMPLETED" || (last.type === "ERROR_OCCURRED" && last.data?.terminal === true))
    )
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { connections, events };
}

/** The WebSocket counterpart: resubscribe with the last seq as last_event_id after any drop. */
export async function followWs(options: {
  url: () => string;
  headers: Record<string, string>;
  taskId: string;
  timeoutMs?: number;
}): Promise<{ connections: Connection[]; events: Json[] }> {
  const end = Date.now() + (options.timeoutMs ?? 30_000);
  const connections: Connection[] = [];
  const events: Json[] = [];
  let lastSeq = 0;
  for (;;) {
    if (Date.now() > end) throw new Error("followWs: no terminal event");
    const openedAt = Date.now();
    const client = new WsClient(options.url(), options.headers);
    const opened = await client.opened.then(
      () => true,
      () => false,
    );
    if (!opened) {
      await new Promise((r) => setTimeout(r, 50));
      continue;
    }
    const resumeAfter = lastSeq;
    client.send({ type: "subscribe", workflow_id: options.taskId, last_event_id: lastSeq });
    await Promise.race([client.closed, client.waitForMessage(isTerminalMessage, 60_000).catch(() => undefined)]);
    const seen = client.events(options.taskId);
    connections.push({ resumeAfter, seqs: seen.map((e) => e.seq as number), openedAt });
    events.push(...seen);
    if (seen.length > 0) lastSeq = seen.at(-1)!.seq as number;
    const finished = client.messages.some(isTerminalMessage);
    client.ws.terminate();
    if (finished) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  return { connections, events };
}

/** A WebSocket message that ends a subscription: the task's terminal event (libs/events terminal.ts). */
export function isTerminalMessage(m: Json): boolean {
  return (
    m.type === "WORKFLOW_COMPLETED" || (m.type === "ERROR_OCCURRED" && (m.data as Json | undefined)?.terminal === true)
  );
}
