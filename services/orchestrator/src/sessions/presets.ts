import { ValidationError } from "@tog/core";
import type { TaskSpec } from "../runtime/flow-context.ts";

// `context.use_case_preset`: a named set of history-window controls, so a client picks a
// conversation style instead of five numbers. The gateway fills every control with its documented
// default (50, 5, 15, 0.8, 0.5) before the orchestrator sees the task, so a control still at
// that default is indistinguishable from an absent one: the preset sets those, and a control the
// client set to another value wins over the preset.

export interface WindowSettings {
  /** Most messages of earlier turns handed to the agent. */
  historyWindowSize: number;
  /** Earliest messages of the session kept verbatim (the conversation's opening). */
  primersCount: number;
  /** Latest messages kept verbatim when the middle is compressed. */
  recentsCount: number;
  /** Compress when the history's token estimate is above this share of the model's context window. */
  compressionTriggerRatio: number;
  /** ...down to at most this share. */
  compressionTargetRatio: number;
}

/** The documented defaults (docs/api.md "Submitting a task"). */
export const DEFAULT_WINDOW: Readonly<WindowSettings> = Object.freeze({
  historyWindowSize: 50,
  primersCount: 5,
  recentsCount: 15,
  compressionTriggerRatio: 0.8,
  compressionTargetRatio: 0.5,
});

export const USE_CASE_PRESETS = Object.freeze({
  /** The documented defaults. */
  default: DEFAULT_WINDOW,
  /** Casual conversation: a short memory, compressed early (cheaper turns). */
  chat: Object.freeze({
    historyWindowSize: 30,
    primersCount: 3,
    recentsCount: 12,
    compressionTriggerRatio: 0.7,
    compressionTargetRatio: 0.4,
  }),
  /** Support conversations: the opening (the customer's problem) and the recent exchange matter most. */
  support: Object.freeze({
    historyWindowSize: 60,
    primersCount: 8,
    recentsCount: 20,
    compressionTriggerRatio: 0.75,
    compressionTargetRatio: 0.5,
  }),
  /** Long analytical sessions: a wide window, compressed late and little. */
  analysis: Object.freeze({
    historyWindowSize: 100,
    primersCount: 5,
    recentsCount: 30,
    compressionTriggerRatio: 0.85,
    compressionTargetRatio: 0.6,
  }),
} satisfies Record<string, Readonly<WindowSettings>>);

export type UseCasePreset = keyof typeof USE_CASE_PRESETS;
export const USE_CASE_PRESET_NAMES = Object.keys(USE_CASE_PRESETS) as UseCasePreset[];

export function isUseCasePreset(value: unknown): value is UseCasePreset {
  return typeof value === "string" && Object.hasOwn(USE_CASE_PRESETS, value);
}

/** Submit-time check (400): preset names are case-sensitive, like `mode` and `model_tier`. */
export function validateUseCasePreset(value: string | undefined): void {
  if (value === undefined || isUseCasePreset(value)) return;
  throw new ValidationError(
    `Invalid use_case_preset: ${JSON.stringify(value)} (allowed: ${USE_CASE_PRESET_NAMES.join(", ")})`,
  );
}

/**
 * The controls a run uses: the preset's values for controls left at the documented default,
 * the client's own values for the others. An unknown preset (refused at submit; possible only
 * for a task queued before a preset was removed) counts as no preset.
 */
export function effectiveWindow(window: TaskSpec["window"]): WindowSettings {
  const preset: Readonly<WindowSettings> = isUseCasePreset(window.useCasePreset)
    ? USE_CASE_PRESETS[window.useCasePreset]
    : DEFAULT_WINDOW;
  const pick = <K extends keyof WindowSettings>(key: K): WindowSettings[K] =>
    window[key] === DEFAULT_WINDOW[key] ? preset[key] : window[key];
  return {
    historyWindowSize: pick("historyWindowSize"),
    primersCount: pick("primersCount"),
    recentsCount: pick("recentsCount"),
    compressionTriggerRatio: pick("compressionTriggerRatio"),
    compressionTargetRatio: pick("compressionTargetRatio"),
  };
}
