import type { Logger } from "@tog/core";
import type { Auth, Principal, RateDecision } from "@tog/edge";
import type { HubRegistry } from "./hub/hub-registry.ts";
import type { JoinOptions } from "./hub/subscription.ts";
import type { TaskOwners } from "./ownership.ts";
import type { ConnectionBudget } from "./ticker.ts";

/** What the SSE and WebSocket endpoints share. */
export interface StreamContext {
  auth: Auth;
  owners: TaskOwners;
  registry: HubRegistry;
  budget: ConnectionBudget;
  /**
   * Counts one stream open (SSE request or WebSocket handshake) of the caller in the streams' own
   * bucket (RATE_LIMIT_STREAM_RPM / _BURST, libs/edge createRateLimiter): see stream-rate-limit.ts.
   */
  rateLimit: (principal: Principal) => Promise<RateDecision | undefined>;
  logger: Logger;
  settings: StreamSettings;
  /** A client closed for being too slow (metric tog_stream_slow_consumer_closes_total; alert in deploy/observability). */
  onSlowClose?: ((kind: "sse" | "websocket") => void) | undefined;
}

export interface StreamSettings {
  keepAliveMs: number;
  retryMs: number;
  maxBufferBytes: number;
  wsMaxSubscriptions: number;
  /** Client messages (and pings) one WebSocket connection may send per second. */
  wsMaxMessagesPerSecond: number;
  /** CORS_ALLOWED_ORIGINS in production (checked on WebSocket handshakes); null = any origin. */
  allowedOrigins: string[] | null;
}

/** How clients join their hub. */
export function joinOptionsOf(ctx: StreamContext): JoinOptions {
  return {
    chunk: 256,
    gapGiveUpMs: 5_000,
    logger: ctx.logger,
  };
}
