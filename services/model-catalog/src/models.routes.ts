import { Router } from "express";
import { ValidationError } from "@tog/core";
import { MODEL_TIERS, isModelTier, type Catalog, type ModelTier } from "@tog/catalog";

export interface ModelsRoutesOptions {
  catalog: Catalog;
  /** Provider names usable now (key configured, or offline). */
  configuredProviders: ReadonlySet<string>;
}

/**
 * GET /providers/models[?tier=]. The catalog and the keys only change with a restart, so
 * the four possible bodies are serialized once here and each request only picks one.
 */
export function createModelsRouter(options: ModelsRoutesOptions): Router {
  const { catalog, configuredProviders } = options;
  const render = (tier?: ModelTier) => JSON.stringify(catalog.byProvider({ tier, configuredProviders }));
  const all = render();
  const byTier = new Map<ModelTier, string>(MODEL_TIERS.map((t) => [t, render(t)]));

  const router = Router();
  router.get("/providers/models", (req, res) => {
    const raw = req.query.tier;
    // `?tier=` with no value means no filter, as an absent parameter does.
    let body = all;
    if (raw !== undefined && raw !== "") {
      if (!isModelTier(raw)) {
        throw new ValidationError(
          `Invalid tier: ${Array.isArray(raw) ? raw.join(",") : String(raw)} (allowed: ${MODEL_TIERS.join(", ")})`,
        );
      }
      body = byTier.get(raw) ?? all;
    }
    res.status(200).type("application/json").send(body);
  });
  return router;
}
