import type http from "node:http";
import type { Duplex } from "node:stream";
import { WebSocketServer } from "ws";
import { ForbiddenError, isAppError, NotFoundError, OverloadedError, rawJsonError, ValidationError } from "@tog/core";
import { statusOf, type Principal } from "@tog/edge";
import { WS_PATH } from "@tog/api";
import { assertOwner } from "../ownership.ts";
import type { HeaderList } from "../sse/sse-stream.ts";
import type { StreamContext } from "../stream-context.ts";
import { countStreamOpen } from "../stream-rate-limit.ts";
import { groupQuery, streamRequestFromQuery, type StreamRequest } from "../stream-request.ts";
import { Ticker } from "../ticker.ts";
import { CLOSE_RESTART } from "./ws-close.ts";
import { WsConnection } from "./ws-connection.ts";

// GET /api/v1/stream/ws upgrades. Everything is checked BEFORE the handshake completes, so a
// refused client gets a plain HTTP answer with a JSON body: credentials in headers only (a
// credential in the query string → 401), the Origin in production (CORS_ALLOWED_ORIGINS), and,
// when `workflow_id` is in the query, its validity (400) and ownership (404). The handshake counts
// against the caller's stream-open limit (429) after authentication; from then on the 101 and any
// refusal carry the X-RateLimit-* headers.

/** Sec-WebSocket-Key: 16 bytes, base64 (RFC 6455 4.1), as `ws` checks it. */
const KEY_RE = /^[+/0-9A-Za-z]{22}==$/;

export interface WebSocketEndpoint {
  readonly connections: number;
  /** Closes every connection with 1012 (service restart): clients resubscribe elsewhere. */
  closeAll(): void;
}

export function attachWebSocketEndpoint(server: http.Server, ctx: StreamContext): WebSocketEndpoint {
  // autoPong off: pongs to client pings count against the connection's buffer bound (WsConnection).
  const wss = new WebSocketServer({
    noServer: true,
    perMessageDeflate: false,
    maxPayload: 64 * 1024,
    clientTracking: false,
    autoPong: false,
  });
  // Handshakes `ws` refuses itself (e.g. a malformed Sec-WebSocket-Protocol) get JSON too.
  wss.on("wsClientError", (err: Error & { code?: string }, socket: Duplex) => {
    refuse(socket, new ValidationError(`Invalid WebSocket handshake: ${err.message}`));
  });
  const pings = new Ticker<WsConnection>(ctx.settings.keepAliveMs, (conn) => conn.heartbeat());
  // The rate-limit headers of a handshake being completed, added to its 101 by ws's `headers`
  // event (emitted by handleUpgrade just before it writes the response).
  const upgradeHeaders = new WeakMap<http.IncomingMessage, HeaderList>();
  wss.on("headers", (lines: string[], req: http.IncomingMessage) => {
    const extra = upgradeHeaders.get(req);
    if (extra === undefined) return;
    upgradeHeaders.delete(req);
    for (let i = 0; i + 1 < extra.length; i += 2) lines.push(`${extra[i]}: ${extra[i + 1]}`);
  });
  let closing = false;

  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on("error", () => socket.destroy());
    void accept(req, socket, head);
  });

  async function accept(req: http.IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (url.pathname !== WS_PATH) {
      refuse(socket, new NotFoundError("Not found"));
      return;
    }
    let principal: Principal;
    let initial: StreamRequest | undefined;
    const headers: HeaderList = [];
    try {
      if (closing) throw new OverloadedError("Service restarting");
      checkHandshake(req);
      checkOrigin(req, ctx.settings.allowedOrigins);
      principal = await ctx.auth.authenticate({ headers: req.headers, url: req.url ?? "/" } as never, {
        allowBearer: true,
      });
      await countStreamOpen(ctx, principal, headers);
      const query = Object.fromEntries(groupQuery(url.searchParams));
      if (query.workflow_id !== undefined) {
        initial = streamRequestFromQuery(query, undefined);
        await assertOwner(ctx.owners, initial.taskId, principal.userId);
      } else if (query.types !== undefined || query.last_event_id !== undefined) {
        // Without workflow_id these would silently do nothing.
        initial = streamRequestFromQuery(query, undefined);
      }
      if (!ctx.budget.tryTake()) throw new OverloadedError("Too many streams on this instance");
    } catch (err) {
      refuse(socket, err, headers);
      return;
    }
    if (socket.destroyed) {
      ctx.budget.give();
      return;
    }
    let upgraded = false;
    // A handshake `ws` refuses after this point never reaches the callback: free the slot then.
    socket.once("close", () => {
      if (!upgraded) ctx.budget.give();
    });
    if (headers.length > 0) upgradeHeaders.set(req, headers);
    wss.handleUpgrade(req, socket, head, (ws) => {
      upgraded = true;
      const conn = new WsConnection({ ctx, ws, socket, principal });
      conn.onClose = () => {
        pings.delete(conn);
        ctx.budget.give();
      };
      pings.add(conn);
      if (initial) void conn.subscribe(initial);
    });
  }

  function refuse(socket: Duplex, err: unknown, headers: HeaderList = []): void {
    const known = isAppError(err) ? err : undefined;
    if (!known) ctx.logger.error({ err }, "websocket handshake failed");
    const status = known ? statusOf(known) : 500;
    if (!socket.writable) {
      socket.destroy();
      return;
    }
    const extra: Record<string, string> = {};
    for (let i = 0; i + 1 < headers.length; i += 2) extra[headers[i]!] = headers[i + 1]!;
    socket.end(rawJsonError(status, known ? known.message : "Internal server error", extra, known?.details));
  }

  return {
    get connections() {
      return pings.size;
    },
    closeAll() {
      closing = true;
      pings.stop();
      for (const conn of pings.items()) conn.close(CLOSE_RESTART, "Service restart: resubscribe with last_event_id");
    },
  };
}

/** What `ws` would refuse with an HTML body, refused here first with JSON (before auth and the slot). */
function checkHandshake(req: http.IncomingMessage): void {
  if (req.method !== "GET") throw new ValidationError("Invalid WebSocket handshake: method must be GET");
  if (String(req.headers.upgrade ?? "").toLowerCase() !== "websocket")
    throw new ValidationError("Invalid WebSocket handshake: Upgrade must be websocket");
  const key = req.headers["sec-websocket-key"];
  if (key === undefined || !KEY_RE.test(key))
    throw new ValidationError("Invalid WebSocket handshake: missing or invalid Sec-WebSocket-Key");
  const version = req.headers["sec-websocket-version"];
  if (version !== "13" && version !== "8")
    throw new ValidationError("Invalid WebSocket handshake: Sec-WebSocket-Version must be 13");
}

/**
 * Browsers send Origin on WebSocket handshakes and CORS does not apply to them, so production
 * checks it against the CORS list itself (non-browser clients send no Origin and pass).
 */
function checkOrigin(req: http.IncomingMessage, allowed: string[] | null): void {
  const origin = req.headers.origin;
  if (allowed === null || origin === undefined) return;
  if (!allowed.includes(origin)) throw new ForbiddenError("Origin not allowed");
}
