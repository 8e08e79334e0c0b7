// test-tier: e2e
import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { ServiceDefinition } from "../src/services.ts";

// Parallel test files race for free ports. When a service finds the port picked for it taken and
// starts on another, the services started alongside it were told the first one: a gateway once
// pointed at a port another test's HTTP server held, and every call answered "Protocol error".
// They are started again with the port the service really has.

let squatter: http.Server;
let taken: number;
beforeAll(async () => {
  squatter = http.createServer((_req, res) => res.writeHead(200).end("{}"));
  await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
  taken = (squatter.address() as AddressInfo).port;
});
afterAll(() => squatter.close());

// The first port handed out is the squatter's; the rest are really free.
vi.mock("../src/free-port.ts", async (importOriginal) => {
  const real = await importOriginal<typeof import("../src/free-port.ts")>();
  let first = true;
  return {
    ...real,
    freePort: async () => {
      if (first) {
        first = false;
        return taken;
      }
      return real.freePort();
    },
  };
});

const { startStack } = await import("../src/stack.ts");

const ROOT = path.resolve(import.meta.dirname, "..", "..", "..");
const FIXTURE = "libs/devstack/test/fixtures/upstream.ts";
const definitions: ServiceDefinition[] = [
  { name: "dep", entry: FIXTURE, defaultPort: 1, readyPath: "/health" },
  {
    name: "user",
    entry: FIXTURE,
    defaultPort: 2,
    readyPath: "/health",
    env: (ctx) => ({ DEP_PORT: String(ctx.portOf("dep")) }),
  },
];

function envOf(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, "utf8");
  return Object.fromEntries(
    raw
      .split("\0")
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
  );
}

describe("a service that had to take another port", () => {
  it.skipIf(process.platform !== "linux")(
    "is named by its real port in the environment of the services that call it",
    async () => {
      const stack = await startStack({
        env: {},
        ports: "free",
        publicPort: 0,
        definitions,
        root: ROOT,
        router: "node",
      });
      try {
        const dep = stack.services.find((s) => s.name === "dep")!;
        const user = stack.services.find((s) => s.name === "user")!;
        expect(dep.port).not.toBe(taken);
        expect(envOf(user.pid).DEP_PORT).toBe(String(dep.port));
      } finally {
        await stack.stop();
      }
    },
    60_000,
  );
});
