import { readFileSync } from "node:fs";

/** The package version, shown by /health. */
export const CONSOLE_VERSION = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
