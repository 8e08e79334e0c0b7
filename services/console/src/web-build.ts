import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ConfigError } from "@tog/core";

/** Where `npm run build --workspace @tog/console` (run by the root `npm run generate`) writes the page. */
export const WEB_BUILD_DIR = fileURLToPath(new URL("../dist", import.meta.url));

/** The built page's directory; a missing build is a start-up error that says how to make it. */
export function requireWebBuild(dir = WEB_BUILD_DIR): string {
  if (!existsSync(path.join(dir, "index.html"))) {
    throw new ConfigError(
      `web console build not found in ${dir}: run \`npm run build --workspace @tog/console\` (npm ci runs it)`,
    );
  }
  return dir;
}
