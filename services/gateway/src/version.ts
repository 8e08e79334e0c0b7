import pkg from "../package.json" with { type: "json" };

/** Reported by GET /health and in the OpenAPI document. */
export const GATEWAY_VERSION: string = pkg.version;
