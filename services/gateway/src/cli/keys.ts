// Operator CLI for API keys and access tokens (there is no HTTP endpoint for them).
//   npm run keys -- create --user <id|email|name> [--name <label>] [--expires-in 30d] [--create-user] [--json]
//   npm run keys -- list [--user <id|email|name>] [--json]
//   npm run keys -- revoke <key-id|prefix>
//   npm run keys -- token --user <id|email|name> [--ttl 3600|12h] [--json]
// Reads DATABASE_URL and AUTH_TOKEN_SECRET (and the rest of its config) from the environment.
import { parseArgs } from "node:util";
import { AppError } from "@tog/core";
import { createDbClient, type Db, type User } from "@tog/db";
import {
  AccessTokens,
  ApiKeyRepository,
  DEFAULT_USER_ID,
  DEFAULT_USER_NAME,
  UserRepository,
  type ApiKeyInfo,
} from "@tog/edge";
import { loadKeysCliConfig, type KeysCliConfig } from "../config.ts";

const USAGE = `Usage: npm run keys -- <command> [options]

Commands:
  create --user <id|email|name> [--name <label>] [--expires-in <n>(s|m|h|d|w)] [--create-user] [--json]
      Creates an API key and prints it ONCE. The user must exist unless --create-user is given
      (the default user "${DEFAULT_USER_NAME}" always exists).
  list [--user <id|email|name>] [--json]
      Lists keys: id, prefix, name, user, status, expiry, last use. Never prints a key or its hash.
  revoke <key-id|prefix>
      Disables a key for good.
  token --user <id|email|name> [--ttl <seconds>|<n>(s|m|h|d)] [--json]
      Prints a bearer access token (HS256 JWT) for the streaming endpoints.
`;

const MAX_TOKEN_TTL_SECONDS = 30 * 86_400;

class UsageError extends Error {}

interface Deps {
  config: KeysCliConfig;
  db: Db;
  users: UserRepository;
  keys: ApiKeyRepository;
  out: (line: string) => void;
}

function parseDuration(text: string): number {
  const m = /^(\d+)\s*(s|m|h|d|w)?$/.exec(text.trim());
  if (!m) throw new UsageError(`Invalid duration "${text}" (use e.g. 3600, 45m, 12h, 30d, 2w)`);
  const unit = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800 }[(m[2] ?? "s") as "s" | "m" | "h" | "d" | "w"];
  const seconds = Number(m[1]) * unit;
  if (seconds <= 0) throw new UsageError(`Duration "${text}" must be positive`);
  return seconds;
}

async function resolveUser(deps: Deps, ref: string, create: boolean): Promise<User> {
  if (ref === DEFAULT_USER_NAME || ref.toLowerCase() === DEFAULT_USER_ID) return deps.users.ensureDefaultUser();
  const found = await deps.users.find(ref);
  if (found) return found;
  if (!create) throw new UsageError(`No user "${ref}". Pass --create-user to create it.`);
  return deps.users.createFromRef(ref);
}

function statusOf(k: ApiKeyInfo, now = Date.now()): string {
  if (k.revokedAt) return "revoked";
  if (!k.isActive) return "disabled";
  if (k.expiresAt && k.expiresAt.getTime() <= now) return "expired";
  return "active";
}

const iso = (d: Date | null) => (d ? d.toISOString() : "-");

async function create(deps: Deps, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      user: { type: "string" },
      name: { type: "string" },
      "expires-in": { type: "string" },
      "create-user": { type: "boolean", default: false },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (!values.user) throw new UsageError("create needs --user <id|email|name>");
  const user = await resolveUser(deps, values.user, values["create-user"]);
  const expiresAt = values["expires-in"] ? new Date(Date.now() + parseDuration(values["expires-in"]) * 1000) : null;
  const name = values.name ?? `cli ${new Date().toISOString().slice(0, 10)}`;
  const { key, info } = await deps.keys.create({ userId: user.id, name, expiresAt });
  if (values.json) {
    deps.out(
      JSON.stringify({
        key,
        id: info.id,
        prefix: info.prefix,
        name: info.name,
        user_id: user.id,
        expires_at: info.expiresAt,
      }),
    );
    return;
  }
  deps.out(`Created API key ${info.id} for user ${user.name} (${user.id})`);
  deps.out(`  name:    ${info.name}`);
  deps.out(`  prefix:  ${info.prefix}`);
  deps.out(`  expires: ${info.expiresAt ? info.expiresAt.toISOString() : "never"}`);
  deps.out("Store this key now; it cannot be shown again:");
  deps.out(key);
}

async function list(deps: Deps, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { user: { type: "string" }, json: { type: "boolean", default: false } },
    strict: true,
  });
  const user = values.user ? await deps.users.get(values.user) : undefined;
  const keys = await deps.keys.list(user ? { userId: user.id } : {});
  const records = keys.map((k) => ({
    id: k.id,
    prefix: k.prefix,
    name: k.name,
    user_id: k.userId,
    status: statusOf(k),
    expires_at: k.expiresAt,
    last_used_at: k.lastUsedAt,
    created_at: k.createdAt,
  }));
  if (values.json) {
    deps.out(JSON.stringify(records));
    return;
  }
  if (records.length === 0) {
    deps.out("No API keys.");
    return;
  }
  const rows = records.map((r) => ({
    ...r,
    expires_at: iso(r.expires_at),
    last_used_at: iso(r.last_used_at),
    created_at: iso(r.created_at),
  }));
  const header = {
    id: "ID",
    prefix: "PREFIX",
    name: "NAME",
    user_id: "USER",
    status: "STATUS",
    expires_at: "EXPIRES",
    last_used_at: "LAST USED",
    created_at: "CREATED",
  };
  const cols = Object.keys(header) as (keyof typeof header)[];
  const width = Object.fromEntries(cols.map((c) => [c, Math.max(header[c].length, ...rows.map((r) => r[c].length))]));
  for (const r of [header, ...rows])
    deps.out(
      cols
        .map((c) => r[c].padEnd(width[c]!))
        .join("  ")
        .trimEnd(),
    );
}

async function revoke(deps: Deps, args: string[]): Promise<void> {
  const { positionals } = parseArgs({ args, options: {}, allowPositionals: true, strict: true });
  const ref = positionals[0];
  if (!ref || positionals.length > 1) throw new UsageError("revoke needs exactly one <key-id|prefix>");
  const matches = await deps.keys.findByIdOrPrefix(ref);
  if (matches.length === 0) throw new UsageError(`No API key with id or prefix "${ref}"`);
  if (matches.length > 1) throw new UsageError(`Prefix "${ref}" matches ${matches.length} keys; revoke by id`);
  const target = matches[0]!;
  if (target.revokedAt) {
    deps.out(`API key ${target.id} (${target.prefix}) was already revoked at ${target.revokedAt.toISOString()}`);
    return;
  }
  const revoked = await deps.keys.revoke(target.id);
  deps.out(`Revoked API key ${target.id} (${target.prefix}) at ${iso(revoked?.revokedAt ?? null)}`);
}

async function token(deps: Deps, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: { user: { type: "string" }, ttl: { type: "string" }, json: { type: "boolean", default: false } },
    strict: true,
  });
  if (!values.user) throw new UsageError("token needs --user <id|email|name>");
  const user = await resolveUser(deps, values.user, false);
  const ttl = values.ttl ? parseDuration(values.ttl) : deps.config.AUTH_TOKEN_TTL_SECONDS;
  if (ttl > MAX_TOKEN_TTL_SECONDS)
    throw new UsageError(`--ttl may be at most ${MAX_TOKEN_TTL_SECONDS} seconds (30 days)`);
  if (deps.config.AUTH_TOKEN_SECRET === undefined) {
    throw new UsageError(
      "token needs AUTH_TOKEN_SECRET (the services' secret); none is set and `npm start` has not created .local/auth-token-secret",
    );
  }
  const tokens = new AccessTokens({
    secret: deps.config.AUTH_TOKEN_SECRET,
    ttlSeconds: deps.config.AUTH_TOKEN_TTL_SECONDS,
  });
  const issued = await tokens.issue(user.id, ttl);
  if (values.json) {
    deps.out(JSON.stringify({ token: issued.token, user_id: user.id, expires_at: issued.expiresAt }));
    return;
  }
  deps.out(issued.token);
  process.stderr.write(
    `Access token for user ${user.name} (${user.id}), valid until ${issued.expiresAt.toISOString()}\n`,
  );
}

const COMMANDS: Record<string, (deps: Deps, args: string[]) => Promise<void>> = { create, list, revoke, token };

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "help" || command === "--help" || command === "-h") {
    process.stdout.write(USAGE);
    return command ? 0 : 2;
  }
  const run = COMMANDS[command];
  if (!run) {
    process.stderr.write(`Unknown command "${command}"\n\n${USAGE}`);
    return 2;
  }
  const config = loadKeysCliConfig(process.env);
  const db = createDbClient({ databaseUrl: config.DATABASE_URL, poolMax: 2 });
  try {
    await run(
      {
        config,
        db,
        users: new UserRepository({ db }),
        keys: new ApiKeyRepository({ db, cacheTtlMs: 0 }),
        out: (line) => process.stdout.write(`${line}\n`),
      },
      rest,
    );
    return 0;
  } catch (err) {
    if (
      err instanceof UsageError ||
      (err instanceof TypeError && "code" in err && String(err.code).startsWith("ERR_PARSE_ARGS"))
    ) {
      process.stderr.write(`${err.message}\n\n${USAGE}`);
      return 2;
    }
    if (err instanceof AppError) {
      process.stderr.write(`${err.message}\n`);
      return 1;
    }
    throw err;
  } finally {
    await db.$disconnect();
  }
}

process.exitCode = await main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`keys: ${err instanceof Error ? err.message : String(err)}\n`);
  return 1;
});
