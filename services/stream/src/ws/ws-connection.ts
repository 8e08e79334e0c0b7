import type { Duplex } from "node:stream";
import type { WebSocket } from "ws";
import { isAppError, UpstreamUnavailableError, ValidationError, type AppError } from "@tog/core";
import { statusOf, type Principal } from "@tog/edge";
import { writeBatched } from "../cork.ts";
import { wsFrameOf, type HubEvent } from "../hub/hub-event.ts";
import { replayAndAttach, Subscription, type Sink } from "../hub/subscription.ts";
import type { TaskHub } from "../hub/task-hub.ts";
import { assertOwner } from "../ownership.ts";
import { joinOptionsOf, type StreamContext } from "../stream-context.ts";
import type { StreamRequest } from "../stream-request.ts";
import { closeReason, CLOSE_INTERNAL, CLOSE_REFUSED_BASE, CLOSE_SLOW_CONSUMER, refusalCode } from "./ws-close.ts";
import { parseClientMessage, taskIdOf } from "./ws-protocol.ts";

// One WebSocket connection: any number of task subscriptions (up to a limit), each with
// the SSE rules (ownership, replay, seam, terminal end), multiplexed on one socket. Events are
// sent as text messages of the SSE-form JSON, which names its workflow_id. Server messages are
// events and pong only (OpenAPI `streamWs`): a refused client message closes the connection with a
// code and reason (ws-close.ts), and an unsubscribe of a task not subscribed is ignored.

interface Entry {
  request: StreamRequest;
  sub: Subscription | undefined;
  hub: TaskHub | undefined;
  cancelled: boolean;
}

class WsSink implements Sink {
  readonly #conn: WsConnection;
  readonly #taskId: string;

  constructor(conn: WsConnection, taskId: string) {
    this.#conn = conn;
    this.#taskId = taskId;
  }

  send(event: HubEvent): void {
    this.#conn.sendEvent(wsFrameOf(event));
  }

  get buffered(): number {
    return this.#conn.ws.bufferedAmount;
  }

  get needsDrain(): boolean {
    return this.#conn.needsDrain;
  }

  drained(): Promise<void> {
    return this.#conn.drained();
  }

  finish(terminal: HubEvent | null, sent: boolean): void {
    this.#conn.finished(this.#taskId, terminal, sent);
  }

  overflow(): void {
    this.#conn.overflow();
  }
}

export interface WsConnectionOptions {
  ctx: StreamContext;
  ws: WebSocket;
  socket: Duplex;
  principal: Principal;
}

export class WsConnection {
  readonly ws: WebSocket;
  readonly #socket: Duplex;
  readonly #ctx: StreamContext;
  readonly #principal: Principal;
  readonly #entries = new Map<string, Entry>();
  /** Answered the last server ping. */
  alive = true;
  /** Set by the server: frees the connection's slot. */
  onClose: (() => void) | undefined;
  #closed = false;
  /** Client messages (and pings) counted in the current one-second window. */
  #windowStart = 0;
  #windowCount = 0;

  constructor(options: WsConnectionOptions) {
    this.ws = options.ws;
    this.#socket = options.socket;
    this.#ctx = options.ctx;
    this.#principal = options.principal;
    this.ws.on("message", (data, isBinary) => this.#onMessage(data as Buffer | Buffer[] | ArrayBuffer, isBinary));
    this.ws.on("pong", () => {
      this.alive = true;
    });
    // autoPong is off (ws-server.ts): a pong, like every other frame, counts against the buffer bound.
    this.ws.on("ping", (data: Buffer) => {
      if (!this.#allowMessage()) return;
      if (this.#closed || this.ws.readyState !== this.ws.OPEN) return;
      this.ws.pong(data);
      this.#checkBuffer();
    });
    this.ws.on("close", () => this.#release());
    this.ws.on("error", (err) => {
      this.#ctx.logger.debug({ err }, "websocket error");
      this.ws.terminate();
    });
  }

  /**
   * Sends one event as its prebuilt frame (framed once per event for every client), straight to
   * the socket, batched with the socket's other writes of this tick. `ws` writes whole frames
   * synchronously (no compression here), so its own messages never interleave with these.
   */
  sendEvent(frame: Buffer): void {
    if (this.#closed || this.ws.readyState !== this.ws.OPEN) return;
    writeBatched(this.#socket, frame);
  }

  /**
   * Every outbound frame counts against STREAM_MAX_BUFFER_BYTES: events through their
   * Subscription (live: the same bound; replay: paced by drain), and pongs here. A peer that
   * stops reading is closed with 1013 once its unsent bytes pass the bound, so memory per
   * connection stays bounded (docs/security.md).
   */
  #checkBuffer(): void {
    if (this.#socket.writableLength > this.#ctx.settings.maxBufferBytes) this.overflow();
  }

  /**
   * Client messages are rate limited per connection (STREAM_WS_MAX_MESSAGES_PER_SECOND, fixed
   * one-second window). The first message over the rate closes the connection with 4429: a
   * message dropped in silence could be a subscribe the client then waits on forever.
   */
  #allowMessage(): boolean {
    if (this.#closed) return false;
    const limit = this.#ctx.settings.wsMaxMessagesPerSecond;
    const now = Date.now();
    if (now - this.#windowStart >= 1_000) {
      this.#windowStart = now;
      this.#windowCount = 0;
    }
    this.#windowCount++;
    if (this.#windowCount <= limit) return true;
    this.#ctx.logger.info({ limit }, "websocket client over its message rate: closing");
    this.close(CLOSE_REFUSED_BASE + 429, `Rate limit exceeded: at most ${limit} messages per second`);
    return false;
  }

  get subscriptionCount(): number {
    return this.#entries.size;
  }

  /** Server ping; a peer that did not answer the previous one is dropped. */
  heartbeat(): void {
    if (!this.alive) {
      this.ws.terminate();
      return;
    }
    this.alive = false;
    try {
      this.ws.ping();
    } catch {
      this.ws.terminate();
    }
  }

  #onMessage(data: Buffer | Buffer[] | ArrayBuffer, isBinary: boolean): void {
    if (!this.#allowMessage()) return;
    if (isBinary) {
      this.#refuse(new ValidationError("Invalid message: binary messages are not supported; send JSON text"));
      return;
    }
    const text = Buffer.isBuffer(data)
      ? data.toString("utf8")
      : Array.isArray(data)
        ? Buffer.concat(data).toString("utf8")
        : Buffer.from(data).toString("utf8");
    let message: ReturnType<typeof parseClientMessage>;
    try {
      message = parseClientMessage(text);
    } catch (err) {
      this.#refuse(err, taskIdOf(text));
      return;
    }
    switch (message.type) {
      case "ping":
        this.#pong();
        return;
      case "unsubscribe":
        // No acknowledgement: server messages are events and pong only (OpenAPI `streamWs`). Not
        // subscribed (never, or its stream already ended) is not an error: the wish holds.
        this.#drop(message.taskId);
        return;
      case "subscribe":
        void this.subscribe(message);
        return;
    }
  }

  /** Subscribes (or re-subscribes, replacing the old subscription) to one task. */
  async subscribe(request: StreamRequest): Promise<void> {
    const { taskId } = request;
    const replacing = this.#entries.has(taskId);
    if (!replacing && this.#entries.size >= this.#ctx.settings.wsMaxSubscriptions) {
      this.#refuse(
        new ValidationError(
          `Too many subscriptions on this connection (at most ${this.#ctx.settings.wsMaxSubscriptions})`,
        ),
        taskId,
      );
      return;
    }
    this.#drop(taskId);
    const entry: Entry = { request, sub: undefined, hub: undefined, cancelled: false };
    this.#entries.set(taskId, entry);
    try {
      await assertOwner(this.#ctx.owners, taskId, this.#principal.userId);
      if (entry.cancelled || this.#closed) return;
      const hub = this.#ctx.registry.acquire(taskId);
      entry.hub = hub;
      const sub = new Subscription({
        taskId,
        filter: request.filter,
        resumeAfter: request.resumeAfter,
        sink: new WsSink(this, taskId),
        maxBufferBytes: this.#ctx.settings.maxBufferBytes,
      });
      entry.sub = sub;
      try {
        await hub.ready();
      } catch (err) {
        this.#ctx.logger.warn({ err, taskId }, "task hub failed to start");
        throw new UpstreamUnavailableError("Event stream unavailable", { cause: err });
      }
      if (entry.cancelled || this.#closed) return;
      await hub.reach(request.resumeAfter);
      if (entry.cancelled || this.#closed) return;
      if (hub.terminalSeq !== null && request.resumeAfter >= hub.terminalSeq) {
        sub.end();
        return;
      }
      await replayAndAttach(sub, hub, joinOptionsOf(this.#ctx));
      if (!sub.live && !sub.closed && !entry.cancelled && !this.#closed) {
        // The hub closed under us (shutdown): the client resubscribes elsewhere.
        throw new UpstreamUnavailableError("Event stream unavailable");
      }
    } catch (err) {
      // Unsubscribed or replaced meanwhile: the client no longer cares about this one.
      const wanted = !entry.cancelled && !this.#closed;
      if (this.#entries.get(taskId) === entry) this.#drop(taskId);
      if (wanted) this.#refuse(err, taskId);
    }
  }

  /**
   * The task's stream is over (terminal event passed): forget it. The terminal event is what
   * tells the client, so it is sent even when the `types` filter left it out (docs/decisions.md
   * "WebSocket server messages").
   */
  finished(taskId: string, terminal: HubEvent | null, sent: boolean): void {
    if (terminal !== null && !sent) this.sendEvent(wsFrameOf(terminal));
    if (this.#entries.has(taskId)) this.#drop(taskId);
  }

  overflow(): void {
    if (this.#closed) return;
    this.#ctx.logger.info({ buffered: this.ws.bufferedAmount }, "websocket client too slow: closing");
    this.#ctx.onSlowClose?.("websocket");
    this.close(CLOSE_SLOW_CONSUMER, "Slow consumer: resubscribe with last_event_id");
  }

  /** Closes with a close frame, and cuts the socket if the peer does not complete the close soon. */
  close(code: number, reason: string): void {
    this.#release();
    try {
      this.ws.close(code, reason);
    } catch {
      // already closing
    }
    const timer = setTimeout(() => this.ws.terminate(), 1_000);
    timer.unref();
  }

  get needsDrain(): boolean {
    return (this.#socket as Duplex & { writableNeedDrain: boolean }).writableNeedDrain;
  }

  drained(): Promise<void> {
    const socket = this.#socket;
    if (this.#closed || socket.destroyed || !this.needsDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        socket.off("drain", done);
        socket.off("close", done);
        resolve();
      };
      socket.on("drain", done);
      socket.on("close", done);
    });
  }

  #drop(taskId: string): boolean {
    const entry = this.#entries.get(taskId);
    if (!entry) return false;
    this.#entries.delete(taskId);
    entry.cancelled = true;
    if (entry.sub) {
      entry.sub.close();
      entry.hub?.detach(entry.sub);
    }
    if (entry.hub) this.#ctx.registry.release(entry.hub);
    return true;
  }

  #release(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const taskId of [...this.#entries.keys()]) this.#drop(taskId);
    this.onClose?.();
  }

  /** The one server message that is not an event (OpenAPI `streamWs`). */
  #pong(): void {
    if (this.#closed || this.ws.readyState !== this.ws.OPEN) return;
    this.ws.send('{"type":"pong"}');
    this.#checkBuffer();
  }

  /**
   * A refused message closes the connection: 4000 + the HTTP status of the same refusal, the
   * error message (naming the task when it fits) as reason; 1011 for an unexpected error.
   * The client's other subscriptions end with it; it resubscribes them with their last seq.
   */
  #refuse(err: unknown, taskId?: string): void {
    if (this.#closed) return;
    const known = isAppError(err) ? (err as AppError) : undefined;
    if (!known) {
      this.#ctx.logger.error({ err, taskId }, "websocket subscription failed");
      this.close(CLOSE_INTERNAL, "Internal server error");
      return;
    }
    this.close(refusalCode(statusOf(known)), closeReason(known.message, taskId));
  }
}
