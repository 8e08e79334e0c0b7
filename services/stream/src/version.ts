import pkg from "../package.json" with { type: "json" };

/** Reported by the health probe and in the OpenAPI document. */
export const STREAM_VERSION: string = pkg.version;
