import { describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import {
  DEFAULT_WINDOW,
  effectiveWindow,
  USE_CASE_PRESETS,
  validateUseCasePreset,
} from "../../src/sessions/presets.ts";
import { validateTaskSpec } from "../../src/flows/index.ts";
import { specFromCommand } from "../../src/tasks/task-spec.ts";
import { catalog } from "../flows/setup.ts";

const window = (over: Record<string, unknown> = {}) => ({ ...DEFAULT_WINDOW, useCasePreset: undefined, ...over });

describe("use_case_preset", () => {
  it("no preset: the controls as given", () => {
    expect(effectiveWindow(window())).toEqual(DEFAULT_WINDOW);
    expect(effectiveWindow(window({ recentsCount: 3 }))).toEqual({ ...DEFAULT_WINDOW, recentsCount: 3 });
  });

  it("a preset sets the controls left at the contract default; the client's own values win", () => {
    expect(effectiveWindow(window({ useCasePreset: "chat" }))).toEqual(USE_CASE_PRESETS.chat);
    expect(
      effectiveWindow(window({ useCasePreset: "analysis", primersCount: 2, compressionTargetRatio: 0.3 })),
    ).toEqual({
      ...USE_CASE_PRESETS.analysis,
      primersCount: 2,
      compressionTargetRatio: 0.3,
    });
  });

  it("every preset is a valid set of controls", () => {
    for (const p of Object.values(USE_CASE_PRESETS)) {
      expect(p.historyWindowSize).toBeGreaterThanOrEqual(p.primersCount + p.recentsCount);
      expect(p.compressionTargetRatio).toBeLessThan(p.compressionTriggerRatio);
    }
  });

  it("an unknown or differently cased preset is refused at submit with the allowed names", () => {
    expect(() => validateUseCasePreset("Chat")).toThrow(ValidationError);
    expect(() => validateUseCasePreset("nope")).toThrow(
      'Invalid use_case_preset: "nope" (allowed: default, chat, support, analysis)',
    );
    expect(() => validateUseCasePreset(undefined)).not.toThrow();
    const spec = specFromCommand({ query: "hi", mode: undefined, context: { use_case_preset: "nope" } });
    expect(() => validateTaskSpec(spec, { catalog })).toThrow("Invalid use_case_preset");
    expect(() =>
      validateTaskSpec(specFromCommand({ query: "hi", mode: undefined, context: { use_case_preset: "support" } }), {
        catalog,
      }),
    ).not.toThrow();
  });
});
