import { describe, expect, it } from "vitest";
import { describeConfig, loadConfig } from "@tog/core";
import { eventsConfigShape } from "../../src/events/index.ts";

describe("events config", () => {
  it("has documented defaults", () => {
    expect(loadConfig(eventsConfigShape, {})).toEqual({
      EVENT_RETENTION_DAYS: 90,
      EVENT_RETENTION_INTERVAL_SECONDS: 3_600,
      EVENT_PERSIST_BATCH: 500,
    });
    for (const v of describeConfig(eventsConfigShape)) expect(v.description.length).toBeGreaterThan(20);
  });

  it("accepts 0 days (keep forever) and refuses batches above max_ack_pending", () => {
    expect(loadConfig(eventsConfigShape, { EVENT_RETENTION_DAYS: "0" }).EVENT_RETENTION_DAYS).toBe(0);
    expect(() => loadConfig(eventsConfigShape, { EVENT_PERSIST_BATCH: "1001" })).toThrow(/EVENT_PERSIST_BATCH/);
    expect(() => loadConfig(eventsConfigShape, { EVENT_RETENTION_INTERVAL_SECONDS: "0" })).toThrow();
  });
});
