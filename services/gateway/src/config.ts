import { z } from "zod";
import { baseConfigShape, envInt, loadConfig, type Env } from "@tog/core";
import { dbConfigShape } from "@tog/db";
import { redisConfigShape } from "@tog/redis";
import { assertAuthConfig, authConfigShape, edgeConfigShape, readLocalTokenSecret } from "@tog/edge";
import { orchestratorClientConfigShape, orchestratorClientTlsConfigShape } from "@tog/proto";
import { opsConfigShape } from "@tog/ops";

export const gatewayConfigShape = {
  ...baseConfigShape,
  ...dbConfigShape,
  ...redisConfigShape,
  ...edgeConfigShape,
  ...authConfigShape,
  ...orchestratorClientConfigShape,
  ...orchestratorClientTlsConfigShape,
  ...opsConfigShape,
  PORT: envInt(8081, 0, 65_535).describe("Gateway HTTP port."),
  HOST: z.string().min(1).default("0.0.0.0").describe("Gateway listen address."),
  GATEWAY_MAX_IN_FLIGHT: envInt(256, 0).describe(
    'Requests this gateway works on at once; beyond it a request is answered 503 + Retry-After at once, before any I/O (docs/reliability.md "Overload"). 0: no bound.',
  ),
  GATEWAY_SHED_EVENT_LOOP_DELAY_MS: envInt(1_000, 0).describe(
    "Event-loop delay (ms, over the last 0.5 s) above which new requests are answered 503 + Retry-After at once: the process is too starved of CPU to answer in time. 0: off.",
  ),
  READINESS_TIMEOUT_MS: envInt(2_000, 50, 30_000).describe(
    "Deadline for all readiness checks together (PostgreSQL, Redis and the orchestrator's ping run in parallel); a check not done by then fails.",
  ),
};

export type GatewayConfig = z.infer<z.ZodObject<typeof gatewayConfigShape>>;

export function loadGatewayConfig(env: Env): GatewayConfig {
  const config = loadConfig(gatewayConfigShape, env);
  assertAuthConfig(config);
  return config;
}

/** What the keys CLI needs: no HTTP, Redis or orchestrator. */
export const keysCliConfigShape = {
  ...baseConfigShape,
  ...dbConfigShape,
  ...authConfigShape,
};

export type KeysCliConfig = z.infer<z.ZodObject<typeof keysCliConfigShape>>;

/** Without AUTH_TOKEN_SECRET the CLI signs with the installation's secret of `npm start`, if any. */
export function loadKeysCliConfig(env: Env): KeysCliConfig {
  const config = loadConfig(keysCliConfigShape, env);
  return { ...config, AUTH_TOKEN_SECRET: config.AUTH_TOKEN_SECRET ?? readLocalTokenSecret() };
}
