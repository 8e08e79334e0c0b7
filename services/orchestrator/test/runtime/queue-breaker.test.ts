import { describe, expect, it } from "vitest";
import { createLogger, OverloadedError } from "@tog/core";
import { QueueBreaker } from "../../src/tasks/queue-breaker.ts";

const logger = createLogger({ service: "breaker-test", level: "silent" });

describe("QueueBreaker", () => {
  it("refuses at once after a failed publish and accepts again when NATS answers", async () => {
    let reachable = false;
    let pings = 0;
    const breaker = new QueueBreaker({
      logger,
      probeEveryMs: 5,
      ping: async () => {
        pings++;
        if (!reachable) throw new Error("timeout");
      },
    });
    expect(() => breaker.assertClosed()).not.toThrow();
    breaker.trip(new Error("publish timed out"));
    expect(() => breaker.assertClosed()).toThrow(OverloadedError);
    await new Promise((r) => setTimeout(r, 40));
    expect(pings).toBeGreaterThan(1);
    expect(breaker.open).toBe(true);
    reachable = true;
    await new Promise((r) => setTimeout(r, 40));
    expect(breaker.open).toBe(false);
    expect(() => breaker.assertClosed()).not.toThrow();
  });
});
