import { createHash, randomBytes } from "node:crypto";

// API key format: `sk_` + 64 lowercase hex characters (32 random bytes). Only the SHA-256
// of the whole key (hex) is stored; the first 12 characters are kept for display so an
// operator can tell keys apart without ever seeing one again.

export const API_KEY_PREFIX = "sk_";
export const API_KEY_DISPLAY_PREFIX_LENGTH = 12;
const API_KEY_RE = /^sk_[0-9a-f]{64}$/;

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString("hex");
}

export function isApiKeyFormat(value: string): boolean {
  return API_KEY_RE.test(value);
}

export function hashApiKey(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}

export function apiKeyDisplayPrefix(key: string): string {
  return key.slice(0, API_KEY_DISPLAY_PREFIX_LENGTH);
}
