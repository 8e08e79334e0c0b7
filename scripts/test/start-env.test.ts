import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "@tog/core";
import { authConfigShape, LOCAL_TOKEN_SECRET_FILE, readLocalTokenSecret } from "@tog/edge";
import { workerLayout } from "@tog/devstack";
import { servicesEnv } from "../start-env.ts";
import { startConfigShape } from "../start.config.ts";

// `npm start`'s per-installation token secret (docs/security.md, "Authentication and secrets"):
// created once, mode 0600, given to every service, never when the operator set one.

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const settings = { NODE_ENV: "development", LOG_LEVEL: "info" };
const dirs: string[] = [];
const secretFileIn = () => {
  const dir = mkdtempSync(path.join(tmpdir(), "tog-secret-"));
  dirs.push(dir);
  return path.join(dir, ".local", "auth-token-secret");
};
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("npm start's local token secret", () => {
  it("creates .local/auth-token-secret (random, 0600, in a 0700 folder) and gives it to every service", () => {
    const file = secretFileIn();
    const env = servicesEnv({ PATH: "/bin", GATEWAY_SKIP_AUTH: "0" }, settings, file);
    expect(env.AUTH_TOKEN_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(file, "utf8").trim()).toBe(env.AUTH_TOKEN_SECRET);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    expect(env).toMatchObject({ PATH: "/bin", GATEWAY_SKIP_AUTH: "0", NODE_ENV: "development", LOG_LEVEL: "info" });
    // A service started with it accepts it (authentication on, not a published value).
    expect(loadConfig(authConfigShape, env).AUTH_TOKEN_SECRET).toBe(env.AUTH_TOKEN_SECRET);
    // The next start (and the keys CLI) reads the same secret; another installation gets another.
    expect(servicesEnv({}, settings, file).AUTH_TOKEN_SECRET).toBe(env.AUTH_TOKEN_SECRET);
    expect(readLocalTokenSecret(file)).toBe(env.AUTH_TOKEN_SECRET);
    expect(servicesEnv({}, settings, secretFileIn()).AUTH_TOKEN_SECRET).not.toBe(env.AUTH_TOKEN_SECRET);
  });

  it("replaces a file too short to be a secret", () => {
    const file = secretFileIn();
    servicesEnv({}, settings, file);
    writeFileSync(file, "short\n");
    const env = servicesEnv({}, settings, file);
    expect(env.AUTH_TOKEN_SECRET).toMatch(/^[0-9a-f]{64}$/);
    expect(readFileSync(file, "utf8").trim()).toBe(env.AUTH_TOKEN_SECRET);
  });

  it("uses the operator's AUTH_TOKEN_SECRET and creates no file then", () => {
    const file = secretFileIn();
    const own = "o".repeat(40);
    expect(servicesEnv({}, { ...settings, AUTH_TOKEN_SECRET: own }, file).AUTH_TOKEN_SECRET).toBe(own);
    expect(existsSync(file)).toBe(false);
  });

  it("keeps the installation's file in the checkout's git-ignored .local/", () => {
    expect(LOCAL_TOKEN_SECRET_FILE).toBe(path.join(REPO_ROOT, ".local", "auth-token-secret"));
    expect(readFileSync(path.join(REPO_ROOT, ".gitignore"), "utf8").split("\n")).toContain(".local/");
  });
});

describe("where npm start runs tasks", () => {
  it("by default in the orchestrator's process: ORCHESTRATOR_WORKER=on and no worker process", () => {
    const { START_WORKER_PROCESSES } = loadConfig(startConfigShape, {});
    expect(workerLayout(START_WORKER_PROCESSES)).toEqual({
      serviceEnv: { orchestrator: { ORCHESTRATOR_WORKER: "on" } },
      replicas: { worker: 0 },
    });
  });

  it("with START_WORKER_PROCESSES=2 in two worker processes, the orchestrator running none", () => {
    const { START_WORKER_PROCESSES } = loadConfig(startConfigShape, { START_WORKER_PROCESSES: "2" });
    expect(workerLayout(START_WORKER_PROCESSES)).toEqual({
      serviceEnv: { orchestrator: { ORCHESTRATOR_WORKER: "off" } },
      replicas: { worker: 2 },
    });
  });
});
