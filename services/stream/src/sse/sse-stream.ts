import type http from "node:http";
import type { Socket } from "node:net";
import { OverloadedError, UpstreamUnavailableError } from "@tog/core";
import { markStreaming, NOSNIFF_NO_STORE, type Principal } from "@tog/edge";
import { writeBatched } from "../cork.ts";
import { httpChunk, httpChunkOf, type HubEvent } from "../hub/hub-event.ts";
import { replayAndAttach, Subscription, type Sink } from "../hub/subscription.ts";
import type { TaskHub } from "../hub/task-hub.ts";
import { assertOwner } from "../ownership.ts";
import { joinOptionsOf, type StreamContext } from "../stream-context.ts";
import type { StreamRequest } from "../stream-request.ts";
import type { Ticker } from "../ticker.ts";

// GET /api/v1/stream/sse once the request is authenticated and validated: ownership (404
// before any stream starts), 204 for a client resuming at or past the end of a finished
// task (EventSource then stops reconnecting), else the stream: headers, `retry:`, the
// replay, then live events until the terminal event, after which the response ends.
//
// Idle streams are most of a fan-out's memory, so what a stream keeps is small on purpose:
// its sink (this class, also its close listener) and its subscription; headers go straight into
// the header block (no per-response header map).
//
// Events are written as prebuilt HTTP chunks (one per event, shared by every client) straight
// to the socket, which is valid while the response owns its socket and uses chunked encoding,
// and only once nothing the response queued itself is still in front: Node 24.22 holds the
// status line and the first chunk back (corked) until the end of the tick, so an event written
// to the socket in the tick the stream opened (a replay from the hub's memory) would go out
// before the status line. Until then, and for ever on HTTP/1.0 or a pipelined request, events
// go through `res.write` (docs/decisions.md "Replay and live, no gap and no duplicate").

const PING = Buffer.from(": ping\n\n");
const PING_CHUNK = httpChunk(PING);

/** Name/value pairs, in order. */
export type HeaderList = string[];

// `no-store` rather than the usual `no-cache`: the stream carries one user's data, like every
// other response (docs/security.md, "Headers"); neither lets a cache replay a stream.
export const SSE_HEADERS: HeaderList = [
  "Content-Type",
  "text/event-stream; charset=utf-8",
  ...NOSNIFF_NO_STORE,
  "X-Accel-Buffering",
  "no",
];

export class SseSink implements Sink {
  readonly res: http.ServerResponse;
  readonly #ctx: StreamContext;
  readonly #keepAlive: Ticker<SseSink>;
  sub: Subscription | undefined;
  hub: TaskHub | undefined;
  /** Set when events go straight to the socket as prebuilt chunks (#direct). */
  #socket: Socket | null = null;
  #released = false;

  constructor(res: http.ServerResponse, ctx: StreamContext, keepAlive: Ticker<SseSink>) {
    this.res = res;
    this.#ctx = ctx;
    this.#keepAlive = keepAlive;
  }

  open(retryMs: number, extraHeaders: HeaderList): void {
    this.res.writeHead(200, extraHeaders.length === 0 ? SSE_HEADERS : [...SSE_HEADERS, ...extraHeaders]);
    this.res.socket?.setNoDelay(true);
    this.res.write(`: stream open\nretry: ${retryMs}\n\n`);
    this.#keepAlive.add(this);
  }

  /**
   * The socket, once prebuilt chunks may go straight to it: the response is not corked and has
   * nothing queued (its own buffers and the socket's are empty), so nothing of the response can
   * still be behind a raw write. Checked per write until it holds; from then on only raw writes
   * and the final `res.end()` follow, in order.
   */
  #direct(): Socket | null {
    const res = this.res;
    if (this.#socket === null && res.chunkedEncoding && res.socket && !res.writableCorked && res.writableLength === 0)
      this.#socket = res.socket;
    return this.#socket;
  }

  send(event: HubEvent): void {
    const socket = this.#direct();
    if (socket) writeBatched(socket, httpChunkOf(event));
    else this.res.write(event.sse);
  }

  #writeFrame(frame: Buffer): void {
    const socket = this.#direct();
    if (socket) writeBatched(socket, httpChunk(frame));
    else this.res.write(frame);
  }

  get buffered(): number {
    return this.res.writableLength;
  }

  get needsDrain(): boolean {
    return this.#socket ? this.#socket.writableNeedDrain : this.res.writableNeedDrain;
  }

  drained(): Promise<void> {
    const res = this.res;
    if (res.destroyed || res.writableEnded || !this.needsDrain) return Promise.resolve();
    // Raw writes fill the socket's buffer, so its drain is the one to wait for.
    const emitter = this.#socket ?? res;
    return new Promise((resolve) => {
      const done = () => {
        emitter.off("drain", done);
        res.off("close", done);
        resolve();
      };
      emitter.on("drain", done);
      res.on("close", done);
    });
  }

  finish(terminal: HubEvent | null, sent: boolean): void {
    // A filtered-out terminal event still moves the client's Last-Event-ID past the end (an
    // `id:` without `data:` dispatches nothing), so its reconnect gets 204 and stops.
    if (terminal && !sent) this.#writeFrame(Buffer.from(`id: ${terminal.streamId}\n\n`));
    this.res.end();
  }

  overflow(): void {
    this.#ctx.logger.info(
      { taskId: this.sub?.taskId, buffered: this.res.writableLength },
      "sse client too slow: closing",
    );
    this.#ctx.onSlowClose?.("sse");
    this.res.destroy();
  }

  /** Keep-alive: a comment, or an `id:` line when filtered events moved the cursor on. */
  keepAlive(): void {
    if (this.res.writableEnded || this.res.destroyed) return;
    const sub = this.sub;
    if (sub && sub.deliveredId !== null && sub.deliveredId !== sub.sentId) {
      sub.sentId = sub.deliveredId;
      this.#writeFrame(Buffer.from(`id: ${sub.deliveredId}\n\n`));
    } else {
      const socket = this.#direct();
      if (socket) writeBatched(socket, PING_CHUNK);
      else this.res.write(PING);
    }
  }

  /** The response closed (or never opened): frees the subscription, the hub and the slot. */
  release(): void {
    if (this.#released) return;
    this.#released = true;
    this.#keepAlive.delete(this);
    if (this.sub) {
      this.sub.close();
      this.hub?.detach(this.sub);
    }
    if (this.hub) this.#ctx.registry.release(this.hub);
    this.#ctx.budget.give();
  }
}

export async function serveSse(
  ctx: StreamContext,
  keepAlive: Ticker<SseSink>,
  principal: Principal,
  res: http.ServerResponse,
  request: StreamRequest,
  extraHeaders: HeaderList = [],
): Promise<void> {
  await assertOwner(ctx.owners, request.taskId, principal.userId);
  if (!ctx.budget.tryTake()) throw new OverloadedError("Too many streams on this instance");

  const sink = new SseSink(res, ctx, keepAlive);
  const hub = ctx.registry.acquire(request.taskId);
  sink.hub = hub;
  res.on("close", () => sink.release());
  // The client may have gone while we checked ownership: its close already fired.
  if (res.destroyed) {
    sink.release();
    return;
  }
  try {
    await hub.ready();
  } catch (err) {
    sink.release();
    throw new UpstreamUnavailableError("Event stream unavailable", { cause: err });
  }
  if (res.destroyed) return;
  await hub.reach(request.resumeAfter);
  if (res.destroyed) return;
  if (hub.terminalSeq !== null && request.resumeAfter >= hub.terminalSeq) {
    sink.release();
    res.writeHead(204, [...NOSNIFF_NO_STORE, ...extraHeaders]).end();
    return;
  }

  const sub = new Subscription({
    // The hub's copy: every stream of the task shares one string.
    taskId: hub.taskId,
    filter: request.filter,
    resumeAfter: request.resumeAfter,
    sink,
    maxBufferBytes: ctx.settings.maxBufferBytes,
  });
  sink.sub = sub;
  markStreaming(res);
  sink.open(ctx.settings.retryMs, extraHeaders);
  try {
    await replayAndAttach(sub, hub, joinOptionsOf(ctx));
  } catch (err) {
    ctx.logger.warn({ err, taskId: request.taskId }, "replay failed; ending the stream (the client resumes)");
  }
  // Not attached and not finished: the hub closed or the store failed. Ending lets the client resume.
  if (!sub.live && !res.writableEnded) {
    sub.close();
    res.end();
  }
}
