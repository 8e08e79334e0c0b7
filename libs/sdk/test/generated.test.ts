// The SDK's types are generated from the gateway's OpenAPI document: this fails when a route
// schema changed and `node libs/sdk/scripts/generate.ts` was not run, and proves at the type
// level that the event types match the one event map of libs/events.
import { readFileSync } from "node:fs";
import { describe, expect, expectTypeOf, it } from "vitest";
import { EVENT_TYPES, type EventPayloads, type EventType as LibEventType } from "@tog/events";
import { DOCUMENT_FILE, generate, TYPES_FILE } from "../scripts/generate.ts";
import type { EventOf, EventType, TogEvent } from "../src/index.ts";

describe("generated files", () => {
  it("the committed OpenAPI document and types are what the generator makes now", async () => {
    const { document, types } = await generate();
    expect(readFileSync(DOCUMENT_FILE, "utf8"), "run: node libs/sdk/scripts/generate.ts").toBe(document);
    expect(readFileSync(TYPES_FILE, "utf8"), "run: node libs/sdk/scripts/generate.ts").toBe(types);
  }, 60_000);

  it("describes one schema per event type, joined by a discriminated StreamEvent", () => {
    const doc = JSON.parse(readFileSync(DOCUMENT_FILE, "utf8")) as {
      components: {
        schemas: Record<string, { oneOf?: unknown[]; discriminator?: { mapping: Record<string, string> } }>;
      };
    };
    const stream = doc.components.schemas.StreamEvent!;
    expect(Object.keys(stream.discriminator!.mapping).sort()).toEqual([...EVENT_TYPES].sort());
    for (const t of EVENT_TYPES) expect(doc.components.schemas[`Event_${t}`], t).toBeDefined();
  });
});

describe("event types", () => {
  it("are the libs/events map: same names, same payloads", () => {
    expectTypeOf<EventType>().toEqualTypeOf<LibEventType>();
    expectTypeOf<EventOf<"LLM_PARTIAL">["data"]>().toEqualTypeOf<EventPayloads["LLM_PARTIAL"]>();
    // Free-form JSON fields (details, tool_args, results) are `unknown` in the SDK: every emitted payload fits.
    expectTypeOf<EventPayloads["APPROVAL_REQUESTED"]>().toExtend<EventOf<"APPROVAL_REQUESTED">["data"]>();
    expectTypeOf<EventPayloads["TOOL_INVOKED"]>().toExtend<EventOf<"TOOL_INVOKED">["data"]>();
    expectTypeOf<EventOf<"APPROVAL_REQUESTED">["data"]["approval_id"]>().toEqualTypeOf<string>();
    expectTypeOf<EventOf<"WORKFLOW_COMPLETED">["data"]>().toEqualTypeOf<EventPayloads["WORKFLOW_COMPLETED"]>();
    expectTypeOf<EventOf<"TOOL_INVOKED">["tool"]>().toEqualTypeOf<string | undefined>();
    // every type's payload, as libs/events builds it, is accepted by the SDK's type of it
    type Fits = { [K in LibEventType]: EventPayloads[K] extends EventOf<K>["data"] ? true : K };
    expectTypeOf<Fits[LibEventType]>().toEqualTypeOf<true>();
    // `type` narrows the union
    const e = {} as TogEvent;
    if (e.type === "LLM_OUTPUT") expectTypeOf(e.data.tokens_used).toEqualTypeOf<number>();
  });
});
