import { stringify } from "yaml";

// A small valid catalog as a plain object; tests break one thing at a time and serialize it.
export function fixture() {
  return {
    providers: {
      openai: {
        display_name: "OpenAI",
        kind: "openai",
        api_key_env: "OPENAI_API_KEY",
        base_url: "https://api.openai.com/v1",
      },
      anthropic: {
        display_name: "Anthropic",
        kind: "anthropic",
        api_key_env: "ANTHROPIC_API_KEY",
        base_url: "https://api.anthropic.com/v1",
      },
      offline: { display_name: "Offline", kind: "offline" },
    } as Record<string, Record<string, unknown>>,
    models: [
      model("o-small", "openai", "small"),
      model("o-large", "openai", "large"),
      { ...model("o-old", "openai", "medium"), enabled: false },
      model("a-medium", "anthropic", "medium"),
      model("off-small", "offline", "small"),
    ] as Record<string, unknown>[],
    pricing: {
      "o-small": { prompt_per_1k: 0.0001, completion_per_1k: 0.0004 },
      "o-large": { prompt_per_1k: 0.00125, completion_per_1k: 0.01 },
      "o-old": { prompt_per_1k: 0.03, completion_per_1k: 0.06 },
      "a-medium": { prompt_per_1k: 0.003, completion_per_1k: 0.015 },
    } as Record<string, Record<string, unknown>>,
    tier_targets: { small: 50, medium: 40, large: 10 } as Record<string, unknown>,
    defaults: { default_tier: "small", complexity_model_id: "o-small", decomposition_model_id: "a-medium" } as Record<
      string,
      unknown
    >,
  };
}

export function model(id: string, provider: string, tier: string) {
  return {
    id,
    provider,
    tier,
    context_window: 128000,
    max_output_tokens: 4096,
    supports_tools: true,
    supports_streaming: tier !== "large",
    capabilities: ["chat"],
  };
}

export const toYaml = (value: unknown) => stringify(value);
