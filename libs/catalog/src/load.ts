import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { ConfigError } from "@tog/core";
import { Catalog, type ModelEntry, type ProviderEntry } from "./catalog.ts";
import { MODEL_TIERS, catalogFileSchema, type CatalogFile } from "./schema.ts";

/** The catalog shipped in the repository; the default of MODELS_CONFIG_PATH. */
export const DEFAULT_CATALOG_PATH = fileURLToPath(new URL("../models.yaml", import.meta.url));

/** Reads, parses and validates a catalog file. Every problem is a ConfigError naming the file. */
export function loadCatalog(path: string = DEFAULT_CATALOG_PATH): Catalog {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new ConfigError(`Cannot read model catalog ${path}: ${reason}`, { cause: err });
  }
  return parseCatalog(text, path);
}

/** Parses catalog YAML text; `source` names it in error messages. */
export function parseCatalog(text: string, source = "<inline>"): Catalog {
  let raw: unknown;
  try {
    raw = parseYaml(text, { prettyErrors: true });
  } catch (err) {
    throw new ConfigError(
      `Invalid model catalog ${source}: YAML syntax: ${(err as Error).message.split("\n")[0]?.replace(/:$/, "")}`,
      { cause: err },
    );
  }
  const parsed = catalogFileSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    throw invalid(
      source,
      parsed.error.issues.map((i) => `${formatPath(i.path)}: ${i.message}`),
    );
  }
  const problems: string[] = [];
  const catalog = build(parsed.data, source, problems);
  if (problems.length > 0) throw invalid(source, problems);
  return catalog;
}

function build(file: CatalogFile, source: string, problems: string[]): Catalog {
  const providers: ProviderEntry[] = Object.entries(file.providers).map(([name, p]) => {
    if (p.kind !== "offline" && p.api_key_env === undefined)
      problems.push(`providers.${name}.api_key_env: required for kind ${p.kind}`);
    if (p.kind !== "offline" && p.base_url === undefined)
      problems.push(`providers.${name}.base_url: required for kind ${p.kind}`);
    return { name, displayName: p.display_name, kind: p.kind, apiKeyEnv: p.api_key_env, baseUrl: p.base_url };
  });
  const providerKinds = new Map(providers.map((p) => [p.name, p.kind]));
  const providerNames = providers.map((p) => p.name).join(", ");

  const seen = new Set<string>();
  const models: ModelEntry[] = [];
  file.models.forEach((m, i) => {
    const where = `models[${i}] (${m.id})`;
    if (seen.has(m.id)) problems.push(`${where}.id: duplicate model id "${m.id}"`);
    seen.add(m.id);
    const kind = providerKinds.get(m.provider);
    if (kind === undefined)
      problems.push(`${where}.provider: unknown provider "${m.provider}" (known: ${providerNames})`);
    const price = file.pricing[m.id];
    if (price === undefined && kind !== "offline") {
      problems.push(
        `pricing.${m.id}: missing; every model needs prompt_per_1k and completion_per_1k (offline models default to 0)`,
      );
    }
    models.push({
      id: m.id,
      provider: m.provider,
      tier: m.tier,
      contextWindow: m.context_window,
      maxOutputTokens: m.max_output_tokens,
      supportsTools: m.supports_tools,
      supportsStreaming: m.supports_streaming,
      capabilities: m.capabilities,
      enabled: m.enabled,
      price: { promptPer1k: price?.prompt_per_1k ?? 0, completionPer1k: price?.completion_per_1k ?? 0 },
    });
  });
  // A price for a model that does not exist is a typo that would leave the real model unpriced.
  for (const id of Object.keys(file.pricing)) {
    if (!seen.has(id)) problems.push(`pricing.${id}: no model with this id`);
  }

  const t = file.tier_targets;
  const sum = MODEL_TIERS.reduce((acc, tier) => acc + t[tier], 0);
  if (sum !== 100)
    problems.push(`tier_targets: must sum to 100 (small ${t.small} + medium ${t.medium} + large ${t.large} = ${sum})`);

  const enabledIds = models.filter((m) => m.enabled).map((m) => m.id);
  for (const key of ["complexity_model_id", "decomposition_model_id"] as const) {
    const id = file.defaults[key];
    const m = models.find((x) => x.id === id);
    if (!m) problems.push(`defaults.${key}: unknown model id "${id}" (valid ids: ${enabledIds.join(", ")})`);
    else if (!m.enabled) problems.push(`defaults.${key}: model "${id}" is disabled`);
  }

  return new Catalog({
    source,
    providers,
    models,
    tierTargets: { small: t.small, medium: t.medium, large: t.large },
    defaults: {
      defaultTier: file.defaults.default_tier,
      complexityModelId: file.defaults.complexity_model_id,
      decompositionModelId: file.defaults.decomposition_model_id,
    },
  });
}

function invalid(source: string, problems: string[]): ConfigError {
  return new ConfigError(`Invalid model catalog ${source}:\n${problems.map((p) => `  ${p}`).join("\n")}`);
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "(root)";
  return path.map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join("");
}
