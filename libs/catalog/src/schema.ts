import { z } from "zod";

// Shape of the catalog YAML file. Objects are strict so a misspelt key (`prompt_per_1K`)
// is a load error instead of a silently ignored price. Cross-references (provider names,
// pricing entries, defaults) are checked after parsing, in load.ts.

export const MODEL_TIERS = ["small", "medium", "large"] as const;
export type ModelTier = (typeof MODEL_TIERS)[number];

export const PROVIDER_KINDS = ["openai", "anthropic", "google", "offline"] as const;
export type ProviderKind = (typeof PROVIDER_KINDS)[number];

const identifier = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:/-]*$/, "must be letters, digits and . _ : / -");

const usd = z.number().finite().min(0);

export const providerFileSchema = z.strictObject({
  display_name: z.string().min(1),
  kind: z.enum(PROVIDER_KINDS),
  /** Name of the environment variable holding the API key; not needed by `offline`. */
  api_key_env: z
    .string()
    .regex(/^[A-Z_][A-Z0-9_]*$/, "must be an environment variable name (A-Z, 0-9, _)")
    .optional(),
  base_url: z.url().optional(),
});

export const modelFileSchema = z.strictObject({
  id: identifier,
  provider: z.string().min(1),
  tier: z.enum(MODEL_TIERS),
  context_window: z.number().int().positive(),
  max_output_tokens: z.number().int().positive(),
  supports_tools: z.boolean(),
  supports_streaming: z.boolean(),
  capabilities: z.array(z.string().min(1)).default([]),
  enabled: z.boolean().default(true),
});

export const priceFileSchema = z.strictObject({
  prompt_per_1k: usd,
  completion_per_1k: usd,
});

export const tierTargetsFileSchema = z.strictObject({
  small: z.number().int().min(0).max(100),
  medium: z.number().int().min(0).max(100),
  large: z.number().int().min(0).max(100),
});

export const catalogFileSchema = z.strictObject({
  providers: z.record(identifier, providerFileSchema),
  models: z.array(modelFileSchema).min(1),
  pricing: z.record(z.string(), priceFileSchema).default({}),
  tier_targets: tierTargetsFileSchema.default({ small: 50, medium: 40, large: 10 }),
  defaults: z.strictObject({
    default_tier: z.enum(MODEL_TIERS).default("small"),
    complexity_model_id: z.string().min(1),
    decomposition_model_id: z.string().min(1),
  }),
});

export type CatalogFile = z.infer<typeof catalogFileSchema>;
