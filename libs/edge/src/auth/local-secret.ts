import { randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

// The per-installation token secret of a local checkout (docs/security.md, "Secrets"): `npm start`
// creates it once (random, 32 bytes, file mode 0600, git-ignored) and gives it to every service it
// starts; `npm run keys -- token` signs with it when AUTH_TOKEN_SECRET is not set. Containers and
// clusters never use it: they get AUTH_TOKEN_SECRET from their secret store.

export const LOCAL_TOKEN_SECRET_FILE = fileURLToPath(new URL("../../../../.local/auth-token-secret", import.meta.url));

/** The installation's secret, or undefined when `npm start` never created one. */
export function readLocalTokenSecret(file = LOCAL_TOKEN_SECRET_FILE): string | undefined {
  try {
    const value = readFileSync(file, "utf8").trim();
    return value.length >= 32 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The installation's secret, created on first use. */
export function ensureLocalTokenSecret(file = LOCAL_TOKEN_SECRET_FILE): string {
  const existing = readLocalTokenSecret(file);
  if (existing !== undefined) return existing;
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString("hex");
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return secret;
}
