import { z } from "zod";
import { baseConfigShape, type ConfigShape } from "@tog/core";
import { catalogConfigShape } from "@tog/catalog";
import { opsConfigShape } from "@tog/ops";

export { providerKeysShape } from "@tog/catalog";

export const modelCatalogConfigShape = {
  ...baseConfigShape,
  PORT: z.coerce.number().int().min(0).max(65_535).default(8090).describe("Model catalog HTTP port."),
  HOST: z.string().min(1).default("0.0.0.0").describe("Model catalog listen address (keep it on an internal network)."),
  ...catalogConfigShape,
  ...opsConfigShape,
} satisfies ConfigShape;
