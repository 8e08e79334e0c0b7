import { describe, expect, it } from "vitest";
import { createLogger, Lifecycle } from "../src/index.ts";

const logger = createLogger({ service: "lifecycle-test", level: "silent" });

describe("Lifecycle.shutdown", () => {
  it("runs the stages in order (intake, drain, clients), a failing hook not stopping the rest", async () => {
    const order: string[] = [];
    const lifecycle = new Lifecycle({ logger, timeoutMs: 1_000 })
      .on("clients", "db", () => void order.push("clients:db"))
      .on("intake", "http", async () => {
        await new Promise((r) => setTimeout(r, 20));
        order.push("intake:http");
      })
      .on("drain", "broken", () => {
        throw new Error("boom");
      })
      .on("drain", "work", () => void order.push("drain:work"));
    expect(lifecycle.isStopping).toBe(false);
    const first = lifecycle.shutdown();
    expect(lifecycle.shutdown()).toBe(first);
    await first;
    expect(order).toEqual(["intake:http", "drain:work", "clients:db"]);
    expect(lifecycle.isStopping).toBe(true);
  });

  it("fails when the hooks outlast the timeout", async () => {
    const lifecycle = new Lifecycle({ logger, timeoutMs: 50 }).on("drain", "stuck", () => new Promise(() => undefined));
    await expect(lifecycle.shutdown()).rejects.toThrow("shutdown exceeded 50 ms");
  });
});
