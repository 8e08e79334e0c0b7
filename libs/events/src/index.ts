export * from "./event-types.ts";
export * from "./payloads.ts";
export * from "./envelope.ts";
export * from "./sse-form.ts";
export * from "./terminal.ts";
export * from "./history.ts";
export * from "./openapi-schemas.ts";
