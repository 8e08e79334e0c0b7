export {
  Catalog,
  isModelTier,
  type CatalogData,
  type CatalogDefaults,
  type ModelEntry,
  type ModelPrice,
  type ModelRecord,
  type ModelSelection,
  type ProviderEntry,
  type TierTargets,
  type TokenUsage,
} from "./catalog.ts";
export { DEFAULT_CATALOG_PATH, loadCatalog, parseCatalog } from "./load.ts";
export { MODEL_TIERS, PROVIDER_KINDS, type ModelTier, type ProviderKind } from "./schema.ts";
export { catalogConfigShape, providerKeysShape } from "./config.ts";
