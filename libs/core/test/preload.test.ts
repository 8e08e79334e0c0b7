// The telemetry preload as services start with it (`node --import @tog/core/preload …`): with an
// OTLP endpoint the Node SDK's instrumentations are on and patch node:http, express, gRPC, pg and
// ioredis as the services import them (ESM); without one, or with the SDK disabled, nothing is
// patched, so the hot path pays nothing for them.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const PRELOAD = import.meta.resolve("@tog/core/preload");
const PROBE = path.join(import.meta.dirname, "fixtures/telemetry-probe.ts");

async function probe(env: Record<string, string>) {
  // A closed port: the exporter never gets to send (the probe exits first).
  const { stdout } = await run(process.execPath, ["--import", PRELOAD, PROBE], {
    env: { PATH: process.env.PATH ?? "", ...env },
    timeout: 20_000,
  });
  return JSON.parse(stdout.trim().split("\n").at(-1) ?? "{}") as {
    exported: boolean;
    instrumentations: string[];
    autoInstrumented: boolean;
    recording: boolean;
    serviceName?: string;
    environment?: string;
    patched: Record<"http" | "express" | "grpc" | "pg" | "ioredis", boolean>;
  };
}

describe("telemetry preload", () => {
  it("with an OTLP endpoint: the SDK runs the http, express, grpc, pg and ioredis instrumentations", async () => {
    const result = await probe({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" });
    expect(result).toMatchObject({ exported: true, autoInstrumented: true, recording: true, serviceName: "probe" });
    expect(result.patched).toEqual({ http: true, express: true, grpc: true, pg: true, ioredis: true });
    expect(result.instrumentations).toEqual(
      expect.arrayContaining(
        ["http", "express", "grpc", "pg", "ioredis"].map((name) => `@opentelemetry/instrumentation-${name}`),
      ),
    );
  });

  it("the SDK takes OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES and OTEL_TRACES_SAMPLER from the service's config", async () => {
    const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" };
    const named = await probe({
      ...endpoint,
      OTEL_SERVICE_NAME: "probe-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=staging",
    });
    expect(named).toMatchObject({
      autoInstrumented: true,
      recording: true,
      serviceName: "probe-eu",
      environment: "staging",
    });
    const off = await probe({ ...endpoint, OTEL_TRACES_SAMPLER: "traceidratio", OTEL_TRACES_SAMPLER_ARG: "0" });
    expect(off).toMatchObject({ autoInstrumented: true, recording: false });
  });

  it.each([
    ["no endpoint", {}],
    ["an empty endpoint", { OTEL_EXPORTER_OTLP_ENDPOINT: "" }],
    ["OTEL_SDK_DISABLED=1", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "1" }],
    ["OTEL_SDK_DISABLED=true", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_SDK_DISABLED: "true" }],
    ["OTEL_TRACES_EXPORTER=none", { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9", OTEL_TRACES_EXPORTER: "none" }],
  ])("with %s: nothing is instrumented or patched", async (_, env: Record<string, string>) => {
    expect(await probe(env)).toMatchObject({
      exported: false,
      instrumentations: [],
      autoInstrumented: false,
      patched: { http: false, express: false, grpc: false, pg: false, ioredis: false },
    });
  });

  it("an invalid OTEL_* value does not stop the preload: the service's own config load reports it", async () => {
    const err = await probe({
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9",
      OTEL_TRACES_SAMPLER: "sometimes",
    }).catch((e: unknown) => e);
    expect(String((err as { stderr?: string }).stderr)).toMatch(/OTEL_TRACES_SAMPLER/);
  });
});
