import { describe, expect, it } from "vitest";
import { z } from "zod";
import { ValidationError } from "@tog/core";
import { ToolError, builtinTools, createToolRegistry, defineTool, type AnyTool } from "../src/index.ts";

/** Test-only tool: waits `ms`, honouring the abort signal only when told to. */
const slowTool = defineTool({
  name: "slow",
  description: "Waits",
  parameters: z.object({ ms: z.number().int().min(0), honourSignal: z.boolean().default(true) }).strict(),
  riskLevel: "low",
  timeoutSeconds: 0.2,
  async execute(args, { signal }) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, args.ms);
      if (args.honourSignal) {
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      }
    });
    return { data: { waited: args.ms, aborted: signal.aborted }, text: `waited ${args.ms} ms` };
  },
});

/** The same wait under a long timeout, so cancellation tests cannot race the timeout on a busy machine. */
const patientTool = defineTool({ ...slowTool, name: "patient", timeoutSeconds: 30 });

const failingTool = defineTool({
  name: "failing",
  description: "Throws",
  parameters: z.object({ sync: z.boolean().default(false) }),
  riskLevel: "medium",
  timeoutSeconds: 1,
  execute(args) {
    if (args.sync) throw new Error("boom (sync)");
    return Promise.reject(new Error("boom"));
  },
});

const clockTool = defineTool({
  name: "clock",
  description: "Reports the injected time",
  parameters: z.object({}),
  riskLevel: "low",
  timeoutSeconds: 1,
  async execute(_args, { now }) {
    return { data: { now: (now?.() ?? new Date()).toISOString() }, text: "" };
  },
});

const registry = createToolRegistry([...builtinTools(), slowTool, patientTool, failingTool, clockTool] as AnyTool[]);

describe("tool registry", () => {
  it("lists and finds tools", () => {
    expect(registry.list().map((t) => t.name)).toEqual([
      "calculator",
      "datetime",
      "json",
      "text",
      "workspace_write",
      "http_fetch",
      "slow",
      "patient",
      "failing",
      "clock",
    ]);
    expect(registry.get("calculator")?.riskLevel).toBe("low");
    expect(registry.get("nope")).toBeUndefined();
  });

  it("returns LLM definitions once computed, for all or a chosen subset in order", () => {
    const all = registry.definitionsForLlm();
    expect(all).toHaveLength(10);
    expect(registry.definitionsForLlm()).toBe(all);
    const some = registry.definitionsForLlm(["text", "calculator"]);
    expect(some.map((d) => d.name)).toEqual(["text", "calculator"]);
    expect(some[1]).toBe(all[0]);
    expect(() => registry.definitionsForLlm(["calculator", "rm_rf"])).toThrow(
      new ValidationError(
        'Unknown tool "rm_rf". Available tools: calculator, datetime, json, text, workspace_write, http_fetch, slow, patient, failing, clock',
      ),
    );
  });

  it("validates arguments with a clear, single-line message", async () => {
    const outcome = await registry.invoke("calculator", { expression: 42, precision: 100, extra: true });
    expect(outcome).toMatchObject({ ok: false, tool: "calculator", errorType: "INVALID_INPUT", recoverable: false });
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(ValidationError);
    expect(outcome.error.message).toBe(
      'Invalid arguments for tool "calculator": expression: Invalid input: expected string, received number; ' +
        'precision: Too big: expected number to be <=64; Unrecognized key: "extra"',
    );
    expect(outcome.durationMs).toBeGreaterThanOrEqual(0);
  });

  it("accepts the JSON string a model's tool call carries", async () => {
    const outcome = await registry.invoke("calculator", '{"expression": "6 * 7"}');
    expect(outcome).toMatchObject({ ok: true, result: { data: { result: "42" }, text: "6 * 7 = 42" } });
    const broken = await registry.invoke("calculator", '{"expression": ');
    expect(broken).toMatchObject({ ok: false, errorType: "INVALID_INPUT" });
    expect(!broken.ok && broken.error.message).toMatch(/^Invalid arguments for tool "calculator": not valid JSON \(/);
    const empty = await registry.invoke("clock", "");
    expect(empty.ok).toBe(true);
  });

  it("reports an unknown tool as invalid input naming the available ones", async () => {
    const outcome = await registry.invoke("shell", { cmd: "ls" });
    expect(outcome).toMatchObject({ ok: false, tool: "shell", errorType: "INVALID_INPUT" });
    expect(!outcome.ok && outcome.error.message).toContain(
      'Unknown tool "shell". Available tools: calculator, datetime',
    );
  });

  it("passes the injected clock to the tool", async () => {
    const outcome = await registry.invoke("clock", {}, { now: () => new Date("2030-01-01T00:00:00Z") });
    expect(outcome.ok && outcome.result.data).toEqual({ now: "2030-01-01T00:00:00.000Z" });
  });

  it("times a call out at the tool's timeoutSeconds and aborts its signal", async () => {
    const started = performance.now();
    const outcome = await registry.invoke("slow", { ms: 5_000 });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(190);
    expect(elapsed).toBeLessThan(3_000);
    expect(outcome).toMatchObject({ ok: false, errorType: "TIMEOUT", recoverable: true });
    if (outcome.ok) return;
    expect(outcome.error).toBeInstanceOf(ToolError);
    expect(outcome.error.message).toBe('Tool "slow" timed out after 0.2 s');
    expect(outcome.durationMs).toBeGreaterThanOrEqual(190);
  });

  it("times out even a tool that ignores its signal", async () => {
    const outcome = await registry.invoke("slow", { ms: 600, honourSignal: false });
    expect(outcome).toMatchObject({ ok: false, errorType: "TIMEOUT" });
  });

  it("finishes a fast call well inside the timeout", async () => {
    const outcome = await registry.invoke("slow", { ms: 10 });
    expect(outcome).toMatchObject({ ok: true, result: { data: { waited: 10, aborted: false } } });
  });

  it("cancels a running call when the caller's signal aborts", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(new Error("task cancelled")), 50);
    const started = performance.now();
    const outcome = await registry.invoke("patient", { ms: 5_000 }, { signal: controller.signal });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(outcome).toMatchObject({ ok: false, errorType: "CANCELLED", recoverable: false });
    expect(!outcome.ok && outcome.error.message).toBe('Tool "patient" was cancelled');
  });

  it("does not start a call whose signal is already aborted", async () => {
    const outcome = await registry.invoke("slow", { ms: 5_000 }, { signal: AbortSignal.abort() });
    expect(outcome).toMatchObject({ ok: false, errorType: "CANCELLED" });
    expect(!outcome.ok && outcome.error.message).toBe('Tool "slow" was cancelled before it started');
  });

  it("reports a throwing tool as TOOL_EXECUTION_FAILED, sync or async", async () => {
    for (const sync of [false, true]) {
      const outcome = await registry.invoke("failing", { sync });
      expect(outcome).toMatchObject({ ok: false, errorType: "TOOL_EXECUTION_FAILED", recoverable: true });
      expect(!outcome.ok && outcome.error.message).toBe(sync ? "boom (sync)" : "boom");
    }
  });

  it("refuses malformed definitions and duplicate names", () => {
    const base = {
      description: "x",
      parameters: z.object({}),
      riskLevel: "low" as const,
      timeoutSeconds: 1,
      execute: async () => ({ data: null, text: "" }),
    };
    expect(() => defineTool({ ...base, name: "has space" })).toThrow(/must match/);
    expect(() => defineTool({ ...base, name: "ok", timeoutSeconds: 0 })).toThrow(/timeoutSeconds/);
    expect(() => defineTool({ ...base, name: "ok", riskLevel: "extreme" as never })).toThrow(/risk level/);
    expect(() => defineTool({ ...base, name: "ok", parameters: z.string() as never })).toThrow(/zod object/);
    expect(() => createToolRegistry([clockTool, clockTool] as AnyTool[])).toThrow('Duplicate tool name "clock"');
  });
});
