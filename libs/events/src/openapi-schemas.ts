import { z } from "zod";
import { EVENT_TYPES, type EventType } from "./event-types.ts";
import { EVENT_PAYLOAD_SCHEMAS } from "./payloads.ts";

// The event map as OpenAPI 3.0 schemas: one schema per event type (`Event_<TYPE>`, its `data`
// the payload schema of payloads.ts), and `StreamEvent`, their union discriminated by `type`.
// Streams (SSE `data:`, WebSocket messages) carry exactly these objects (sse-form.ts), so the
// document and the SDK's types come from the same zod schemas the emitters are checked with.

type JsonSchema = Record<string, unknown>;

/** Component name of an event type's schema. */
export const eventSchemaName = (type: EventType): string => `Event_${type}`;
export const STREAM_EVENT_SCHEMA = "StreamEvent";

/** Top-level copies of the SSE form (sse-form.ts), per type. */
const TOP_LEVEL: Partial<Record<EventType, JsonSchema>> = {
  WORKFLOW_COMPLETED: {
    result: { description: "Copy of `data.result`." },
    status: { type: "string", enum: ["COMPLETED"] },
  },
  AGENT_COMPLETED: { result: { description: "Copy of `data.result`." } },
  TOOL_INVOKED: {
    tool: { type: "string", description: "Copy of `data.tool_name`." },
    params: { type: "object", additionalProperties: {}, description: "Copy of `data.tool_args`." },
  },
  TOOL_OBSERVATION: {
    tool: { type: "string", description: "Copy of `data.tool_name`." },
    result: { description: "Copy of `data.result`." },
  },
  ERROR_OCCURRED: {
    status: {
      type: "string",
      enum: ["FAILED", "TIMEOUT", "CANCELLED"],
      description: "Only on the terminal error: the final task status.",
    },
  },
};

/** Replaces zod's recursive JSON-value definitions by an unconstrained schema (any JSON value). */
function inlineJsonValues(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(inlineJsonValues);
  if (typeof value !== "object" || value === null) return value;
  const o = value as JsonSchema;
  if (typeof o.$ref === "string" && o.$ref.startsWith("#/definitions/")) return { description: "Any JSON value." };
  const out: JsonSchema = {};
  for (const [k, v] of Object.entries(o)) if (k !== "definitions" && k !== "$schema") out[k] = inlineJsonValues(v);
  return out;
}

function payloadSchema(type: EventType): JsonSchema {
  return inlineJsonValues(
    z.toJSONSchema(EVENT_PAYLOAD_SCHEMAS[type], { target: "openapi-3.0", unrepresentable: "any" }),
  ) as JsonSchema;
}

/** `{ Event_<TYPE>: schema, …, StreamEvent: oneOf }`, ready to register as components. */
export function eventOpenApiSchemas(): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const type of EVENT_TYPES) {
    const extra = TOP_LEVEL[type] ?? {};
    out[eventSchemaName(type)] = {
      type: "object",
      description: `A ${type} event as streams send it.`,
      properties: {
        workflow_id: { type: "string" },
        type: { type: "string", enum: [type] },
        agent_id: { type: "string" },
        message: { type: "string" },
        timestamp: { type: "string", format: "date-time" },
        seq: {
          type: "integer",
          minimum: 1,
          description: "Strictly increasing, gap-free per task; deduplicate by it.",
        },
        stream_id: { type: "string", description: "`<millis>-<seq>`: the SSE `id`, a resume point." },
        trace_id: { type: "string", description: "W3C trace id of the task." },
        data: payloadSchema(type),
        ...extra,
      },
      required: ["workflow_id", "type", "agent_id", "message", "timestamp", "seq", "stream_id", "data"],
    };
  }
  out[STREAM_EVENT_SCHEMA] = {
    description:
      "One event of a task's stream: the SSE `data:` line and the WebSocket message. `type` selects the schema.",
    oneOf: EVENT_TYPES.map((t) => ({ $ref: `#/components/schemas/${eventSchemaName(t)}` })),
    discriminator: {
      propertyName: "type",
      mapping: Object.fromEntries(EVENT_TYPES.map((t) => [t, `#/components/schemas/${eventSchemaName(t)}`])),
    },
  };
  return out;
}
