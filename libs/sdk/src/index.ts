// @tog/sdk: the public surface. Browser-safe (fetch, WebSocket, URL, AbortSignal, TextDecoderStream).
export { TogClient, Tasks, Sessions, Approvals } from "./client.ts";
export type { TogClientOptions, SubmitOptions, Submitted, ListTasksOptions, WaitOptions, CancelResult, DecisionInput, SubmittedStream } from "./client.ts";
export type { StreamOptions, StreamTransport, ReconnectInfo, WebSocketConstructor } from "./stream.ts";
export { sseEvents, wsEvents } from "./stream.ts";
export type { RequestOptions, TransportOptions, FetchLike } from "./transport.ts";
export { Transport } from "./transport.ts";
export * from "./errors.ts";
export * from "./types.ts";
export { backoffDelay, parseRetryAfter } from "./backoff.ts";
export { randomId } from "./ids.ts";
export type { components, operations, paths } from "./generated/api.ts";
