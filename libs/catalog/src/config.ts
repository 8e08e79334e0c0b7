import { z } from "zod";
import type { ConfigShape } from "@tog/core";
import type { Catalog } from "./catalog.ts";
import { MODEL_TIERS } from "./schema.ts";

// Variables of every process that loads the catalog (model catalog service, workers): where the
// catalog is, which models do complexity analysis and decomposition, and the provider keys.

const apiKey = (provider: string) =>
  z.string().optional().describe(`${provider} API key. Unset or blank: the provider lists no models. Never logged.`);

export const catalogConfigShape = {
  MODELS_CONFIG_PATH: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Model catalog YAML (providers, models, central pricing, tier targets). Default: libs/catalog/models.yaml.",
    ),
  COMPLEXITY_MODEL_ID: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Model for complexity analysis; overrides the catalog's defaults.complexity_model_id. Must exist in the catalog.",
    ),
  DECOMPOSITION_MODEL_ID: z
    .string()
    .min(1)
    .optional()
    .describe(
      "Model for task decomposition; overrides the catalog's defaults.decomposition_model_id. Must exist in the catalog.",
    ),
  DEFAULT_MODEL_TIER: z
    .enum(MODEL_TIERS)
    .optional()
    .describe("small | medium | large; overrides the catalog's defaults.default_tier (small in the shipped catalog)."),
  OPENAI_API_KEY: apiKey("OpenAI"),
  ANTHROPIC_API_KEY: apiKey("Anthropic"),
  GOOGLE_API_KEY: apiKey("Google Gemini"),
} satisfies ConfigShape;

/**
 * The key variable of every provider the loaded catalog names (a custom catalog may add
 * providers with their own variable), so keys are read through loadConfig like any setting.
 */
export function providerKeysShape(catalog: Catalog): ConfigShape {
  const shape: Record<string, z.ZodType> = {};
  for (const p of catalog.providers()) {
    if (p.apiKeyEnv !== undefined) shape[p.apiKeyEnv] = apiKey(p.displayName);
  }
  return shape;
}
