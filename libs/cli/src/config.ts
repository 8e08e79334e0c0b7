import { readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

// Where the CLI finds the server and the credential, first match wins:
//   --base-url / --api-key  >  TOG_BASE_URL / TOG_API_KEY  >  the config file  >  localhost.
// The config file is --config, else TOG_CONFIG, else $XDG_CONFIG_HOME/tog/config.json
// (~/.config/tog/config.json): {"base_url": "...", "api_key": "sk_..."}.

export interface CliConfig {
  baseUrl: string;
  apiKey: string | undefined;
  /** Where the values came from (for `tog config`). */
  file: string | undefined;
}

export const DEFAULT_BASE_URL = "http://localhost:8080";

export function configFilePath(explicit: string | undefined, env: NodeJS.ProcessEnv): string {
  if (explicit) return explicit;
  if (env.TOG_CONFIG) return env.TOG_CONFIG;
  const base = env.XDG_CONFIG_HOME || path.join(os.homedir(), ".config");
  return path.join(base, "tog", "config.json");
}

function readFile(file: string, required: boolean): { base_url?: string; api_key?: string } {
  try {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (typeof parsed !== "object" || parsed === null) throw new Error("expected a JSON object");
    return parsed as { base_url?: string; api_key?: string };
  } catch (err) {
    if (!required && (err as NodeJS.ErrnoException).code === "ENOENT") return {};
    throw new Error(`Cannot read config file ${file}: ${(err as Error).message}`);
  }
}

export function resolveConfig(
  flags: { baseUrl?: string; apiKey?: string; config?: string },
  env: NodeJS.ProcessEnv = process.env,
): CliConfig {
  const file = configFilePath(flags.config, env);
  const fromFile = readFile(file, flags.config !== undefined || env.TOG_CONFIG !== undefined);
  return {
    baseUrl: flags.baseUrl ?? env.TOG_BASE_URL ?? fromFile.base_url ?? DEFAULT_BASE_URL,
    apiKey: flags.apiKey ?? (env.TOG_API_KEY || undefined) ?? fromFile.api_key,
    file: Object.keys(fromFile).length > 0 ? file : undefined,
  };
}
