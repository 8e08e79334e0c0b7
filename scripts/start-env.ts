import { ensureLocalTokenSecret, LOCAL_TOKEN_SECRET_FILE } from "@tog/edge";

// The environment `npm start` (scripts/start.ts) gives every service it starts: its own, with the
// settings it resolved. Without AUTH_TOKEN_SECRET every service shares this installation's
// generated secret (.local/auth-token-secret, docs/security.md), so authentication can be turned
// on without a published value.

export interface StartSettings {
  NODE_ENV: string;
  LOG_LEVEL: string;
  AUTH_TOKEN_SECRET?: string | undefined;
}

export function servicesEnv(
  inherited: Record<string, string | undefined>,
  settings: StartSettings,
  secretFile = LOCAL_TOKEN_SECRET_FILE,
): Record<string, string | undefined> {
  return {
    ...inherited,
    NODE_ENV: settings.NODE_ENV,
    LOG_LEVEL: settings.LOG_LEVEL,
    AUTH_TOKEN_SECRET: settings.AUTH_TOKEN_SECRET ?? ensureLocalTokenSecret(secretFile),
  };
}
