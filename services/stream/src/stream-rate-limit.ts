import { RateLimitedError } from "@tog/core";
import { rateLimitHeaders, type Principal } from "@tog/edge";
import type { HeaderList } from "./sse/sse-stream.ts";
import type { StreamContext } from "./stream-context.ts";

// Opening a stream counts against the caller's limit in a bucket of its own (RATE_LIMIT_STREAM_RPM,
// RATE_LIMIT_STREAM_BURST; docs/security.md "Rate limits"): the SSE response and the WebSocket
// handshake carry the X-RateLimit-* headers (docs/api.md "Rate limits") like every authenticated
// response, and a runaway reconnect loop gets 429 + Retry-After. Only the open pays (two Redis
// commands, pipelined); events on an open stream are never counted.

/**
 * Counts the open and appends X-RateLimit-Limit/Remaining/Reset to `headers` (so every later
 * answer, the stream or a refusal, carries them); throws RateLimitedError (429) when refused.
 * A limiter that could not decide (Redis and its fallback failed) lets the stream open, without headers.
 */
export async function countStreamOpen(ctx: StreamContext, principal: Principal, headers: HeaderList): Promise<void> {
  const decision = await ctx.rateLimit(principal);
  if (decision === undefined) return;
  for (const [name, value] of rateLimitHeaders(decision)) headers.push(name, value);
  if (decision.retryAfter !== undefined) {
    headers.push("Retry-After", String(decision.retryAfter));
    throw new RateLimitedError(decision.retryAfter);
  }
}
