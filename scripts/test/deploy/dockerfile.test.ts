import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SERVICES } from "@tog/devstack";
import { imageConfig, parseDockerfile } from "./dockerfile.ts";
import { REPO_ROOT } from "./tools.ts";

// No Docker engine runs here, so the Dockerfile is checked as a document: its stages, what each
// target image runs and as whom, and its HEALTHCHECK command, which is run for real.

const OPS_PORT = 9464;
const { args, stages } = parseDockerfile();
const stage = (name: string) => {
  const s = stages.find((x) => x.name === name);
  if (!s) throw new Error(`Dockerfile has no stage ${name}`);
  return s;
};
const runs = (name: string) =>
  stage(name)
    .instructions.filter((i) => i.getKeyword() === "RUN")
    .map((i) => (i.getArgumentsContent() ?? "").replace(/\s+/g, " "));
const servicePackages = () =>
  SERVICES.map((s) => s.entry.split("/").slice(0, 2).join("/"))
    .filter((dir, i, all) => all.indexOf(dir) === i)
    .map(
      (dir) => (JSON.parse(readFileSync(path.join(REPO_ROOT, dir, "package.json"), "utf8")) as { name: string }).name,
    );

describe("Dockerfile", () => {
  it("builds on a Node 24 image in several stages", () => {
    expect(args.get("NODE_IMAGE")).toMatch(/^node:24[.-]/);
    const external = stages.filter((s) => !stages.some((x) => x.name === s.from));
    expect(external.length, "the build and the runtime start from the Node image").toBeGreaterThanOrEqual(2);
    for (const s of external) expect(s.from, s.name).toMatch(/^node:24[.-]/);
    expect(stages.length).toBeGreaterThanOrEqual(4);
  });

  it("generates the Prisma client and the gRPC types at build time, and ships production dependencies only", () => {
    expect(runs("build").some((r) => /npm ci\b/.test(r))).toBe(true);
    expect(runs("build").some((r) => r.includes("npm run generate"))).toBe(true);
    const prodInstall = runs("prod").find((r) => /npm ci\b/.test(r));
    expect(prodInstall).toMatch(/--omit=dev/);
    for (const pkg of servicePackages()) expect(prodInstall, pkg).toContain(`--workspace=${pkg}`);
    // The runtime image takes the production tree and the generated code, nothing from `build`.
    const runtimeCopies = stage("runtime")
      .instructions.filter((i) => i.getKeyword() === "COPY")
      .map((i) => i.getArgumentsContent());
    expect(runtimeCopies).toEqual(["/app /app"]);
    const prodCopies = stage("prod").instructions.map((i) => i.toString());
    expect(prodCopies.some((c) => c.includes("--from=build") && c.includes("libs/db/src/generated"))).toBe(true);
    expect(prodCopies.some((c) => c.includes("--from=build") && c.includes("libs/proto/src/generated"))).toBe(true);
  });

  it("has a target for every service, running its entry file as a non-root user with a health check", () => {
    for (const service of SERVICES) {
      const config = imageConfig(stages, service.name);
      // with the telemetry preload, as npm start and the e2e harness run services (libs/devstack)
      expect(config.cmd, service.name).toEqual(["node", "--import", "@tog/core/preload", service.entry]);
      expect(existsSync(path.join(REPO_ROOT, service.entry)), service.entry).toBe(true);
      expect(config.user, `${service.name}: USER`).toMatch(/^[1-9]\d*(:[1-9]\d*)?$/);
      expect(config.healthcheck?.[0], `${service.name}: HEALTHCHECK`).toBe("node");
      expect(config.stopSignal ?? "SIGTERM").toBe("SIGTERM");
      expect(config.env.NODE_ENV).toBe("production");
      expect(config.expose).toContain(OPS_PORT);
      if (service.defaultPort !== undefined) {
        expect(Number(config.env.PORT), `${service.name}: PORT`).toBe(service.defaultPort);
        expect(config.expose, `${service.name}: EXPOSE`).toContain(service.defaultPort);
      }
      if (service.readyPath !== undefined) {
        expect(config.env.HEALTH_PATH, `${service.name}: health path`).toBe(service.readyPath);
        expect(config.env.HEALTH_PORT, `${service.name}: checked on its own port`).toBeUndefined();
      } else {
        expect(Number(config.env.HEALTH_PORT), `${service.name}: checked on the ops port`).toBe(OPS_PORT);
        expect(config.env.HEALTH_PATH).toBe("/health");
      }
      for (const key of Object.keys(config.env))
        expect(key, "no secrets baked into an image").not.toMatch(/SECRET|PASSWORD|TOKEN|API_KEY|_URL$/);
    }
  });

  it("the telemetry preload the services start with resolves from the application's root", () => {
    const preload = createRequire(path.join(REPO_ROOT, "package.json")).resolve("@tog/core/preload");
    expect(existsSync(preload)).toBe(true);
  });

  it("has a migrate target that runs the migrations, then the JetStream setup", () => {
    const config = imageConfig(stages, "migrate");
    expect(config.user).toMatch(/^[1-9]/);
    expect(config.healthcheck).toEqual(["NONE"]);
    expect(config.cmd?.join(" ")).toMatch(
      /node libs\/db\/src\/cli\/migrate\.ts && exec node libs\/bus\/src\/cli\/setup\.ts/,
    );
    for (const entry of ["libs/db/src/cli/migrate.ts", "libs/bus/src/cli/setup.ts"])
      expect(existsSync(path.join(REPO_ROOT, entry)), entry).toBe(true);
  });

  it("keeps the build context lean (.dockerignore) without dropping what the images need", () => {
    const lines = readFileSync(path.join(REPO_ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    for (const p of ["**/node_modules", ".git", ".env", "libs/db/src/generated", "libs/proto/src/generated", "**/test"])
      expect(lines, p).toContain(p);
    for (const needed of ["libs", "services", "proto", "package.json", "package-lock.json", "libs/catalog"])
      expect(lines, needed).not.toContain(needed);
    // npm ci needs every workspace's manifest, including those of workspaces not shipped.
    expect(lines).toEqual(expect.arrayContaining(["!tests-e2e/package.json", "!bench/package.json"]));
  });

  describe("HEALTHCHECK command", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      server = createServer((req, res) => {
        res.statusCode = req.url === "/api/v1/health" || req.url === "/health" ? 200 : 503;
        res.end();
      });
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      port = (server.address() as AddressInfo).port;
    });
    afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

    // The check runs in the container with the image's ENV; run it the same way (as a child
    // process that this process's server answers).
    const check = (target: string, env: Record<string, string>) => {
      const config = imageConfig(stages, target);
      const [cmd, ...rest] = config.healthcheck!;
      return new Promise<number | null>((resolve, reject) => {
        const child = spawn(cmd === "node" ? process.execPath : cmd!, rest, {
          env: { ...config.env, ...env },
          stdio: "ignore",
        });
        child.on("error", reject);
        child.on("exit", (code) => resolve(code));
      });
    };

    it("passes when the service answers its health path, and fails when it does not", async () => {
      expect(await check("gateway", { PORT: String(port) })).toBe(0);
      expect(await check("session", { PORT: String(port) })).toBe(0);
      expect(await check("worker", { HEALTH_PORT: String(port) })).toBe(0);
      expect(await check("gateway", { PORT: String(port), HEALTH_PATH: "/down" })).toBe(1);
      server.closeAllConnections();
      const closed = await new Promise<number>((resolve) => {
        const probe = createServer();
        probe.listen(0, "127.0.0.1", () => {
          const p = (probe.address() as AddressInfo).port;
          probe.close(() => resolve(p));
        });
      });
      expect(await check("stream", { PORT: String(closed) })).toBe(1);
    });
  });
});
