export { createModelCatalogApp, type ModelCatalogAppOptions } from "./app.ts";
export { modelCatalogConfigShape, providerKeysShape } from "./config.ts";
export { createModelsRouter, type ModelsRoutesOptions } from "./models.routes.ts";
export { modelCatalogDocs } from "./openapi.ts";
