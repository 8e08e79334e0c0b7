import { z } from "zod";
import { opsConfigShape } from "@tog/ops";
import { baseConfigShape, envInt, loadConfig, type ConfigShape, type Env } from "@tog/core";

/**
 * The web console: static files of the built single-page app under `/console`, and the one
 * setting the page needs at run time (where the API is), served as `/console/config.json`.
 */
export const consoleConfigShape = {
  ...baseConfigShape,
  ...opsConfigShape,
  PORT: envInt(8084, 0, 65_535).describe("Web console HTTP port (the public router/Ingress sends `/console` here)."),
  HOST: z.string().min(1).default("0.0.0.0").describe("Web console listen address."),
  CONSOLE_API_BASE_URL: z
    .string()
    .min(1)
    .default("/api/v1")
    .refine((v) => v.startsWith("/") || /^https?:\/\/[^/]+/.test(v), "an absolute path (/api/v1) or an http(s) URL")
    .transform((v) => v.replace(/\/+$/, ""))
    .describe(
      "Base URL of the API the console's page calls: a path on the console's own origin (default `/api/v1`, the public router/Ingress) or an http(s) URL (then allowed by the page's Content-Security-Policy, and the API's CORS must admit the console's origin).",
    ),
} satisfies ConfigShape;

export type ConsoleConfig = z.infer<z.ZodObject<typeof consoleConfigShape>>;

export function loadConsoleConfig(env: Env): ConsoleConfig {
  return loadConfig(consoleConfigShape, env);
}
