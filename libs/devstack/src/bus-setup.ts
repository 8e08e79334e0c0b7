import { existsSync } from "node:fs";
import path from "node:path";
import { runNodeScript } from "./run-script.ts";
import type { Env } from "./service-process.ts";
import { REPO_ROOT } from "./paths.ts";

export const BUS_SETUP_ENTRY = "libs/bus/src/cli/setup.ts";

/**
 * Creates the JetStream streams for `env.NATS_PREFIX` by running the bus setup CLI as a child
 * process (the same command an operator or an init container runs). Returns false when the
 * CLI does not exist yet.
 */
export async function runBusSetup(env: Env, root = REPO_ROOT): Promise<boolean> {
  const entry = path.join(root, BUS_SETUP_ENTRY);
  if (!existsSync(entry)) return false;
  await runNodeScript({ entry, env, cwd: root, timeoutMs: 60_000 });
  return true;
}
