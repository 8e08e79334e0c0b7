import { describe, expect, it } from "vitest";
import { normalizeTaskContext, readTaskContext, SubmitTaskBody, TASK_CONTEXT_KEYS } from "../src/index.ts";

const DEFAULTS = {
  prompt_params: {},
  disable_ai: false,
  require_approval: false,
  history_window_size: 50,
  primers_count: 5,
  recents_count: 15,
  compression_trigger_ratio: 0.8,
  compression_target_ratio: 0.5,
};

describe("the submission context", () => {
  it("has the seventeen recognized keys", () => {
    expect(TASK_CONTEXT_KEYS).toHaveLength(17);
    expect(TASK_CONTEXT_KEYS).toEqual(
      expect.arrayContaining(["role", "template_name", "require_approval", "compression_target_ratio"]),
    );
  });

  it("is stored with every default, top-level model controls over the context's, template_name folded in", () => {
    const body = SubmitTaskBody.parse({
      query: "q",
      model_tier: "large",
      context: {
        model_tier: "small",
        provider_override: "anthropic",
        template_name: "t",
        primers_count: 2,
        custom: { a: 1 },
        role: null,
      },
    });
    expect(normalizeTaskContext(body.context, body)).toEqual({
      ...DEFAULTS,
      custom: { a: 1 },
      model_tier: "large",
      provider_override: "anthropic",
      template: "t",
      primers_count: 2,
    });
    expect(normalizeTaskContext(undefined)).toEqual(DEFAULTS);
  });

  it("reads back what was stored, free-form keys apart", () => {
    const stored = normalizeTaskContext(
      { system_prompt: "be brief", recents_count: 0, note: "x" },
      { model_override: "gpt" },
    );
    const { context, extra } = readTaskContext(stored);
    expect(extra).toEqual({ note: "x" });
    expect(context).toMatchObject({ ...DEFAULTS, system_prompt: "be brief", recents_count: 0, model_override: "gpt" });
    expect(context.model_tier).toBeUndefined();
  });

  it("reads a value the schema refuses (a caller that skipped the gateway) as absent", () => {
    const { context } = readTaskContext({
      history_window_size: 5_000,
      model_tier: "huge",
      disable_ai: "yes",
      role: "",
    });
    expect(context.history_window_size).toBe(50);
    expect(context.model_tier).toBeUndefined();
    expect(context.disable_ai).toBe(false);
    expect(context.role).toBeUndefined();
  });
});
