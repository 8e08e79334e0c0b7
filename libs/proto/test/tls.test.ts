import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@tog/core";
import {
  clientCredentialsOf,
  createOrchestratorClient,
  serverCredentialsOf,
  startOrchestratorServer,
} from "@tog/proto";
import { fakeOrchestrator } from "./helpers.ts";

// Optional TLS on the gateway → orchestrator link (issue 11): certificates from files, mutual TLS
// when the server is given a client CA. Real certificates made with openssl, a real gRPC server.

const silent = () => createLogger({ service: "proto-test", level: "silent" });
let dir: string;
const f = (name: string) => path.join(dir, name);

function openssl(args: string[]): void {
  execFileSync("openssl", args, { stdio: "ignore" });
}

/** A CA, and a certificate for `cn` (SAN localhost + 127.0.0.1) signed by it. */
function issue(cn: string): void {
  openssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    f(`${cn}.key`),
    "-out",
    f(`${cn}.csr`),
    "-subj",
    `/CN=${cn}`,
  ]);
  const ext = f(`${cn}.ext`);
  execFileSync("sh", ["-c", `printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\\n' > ${ext}`]);
  openssl([
    "x509",
    "-req",
    "-in",
    f(`${cn}.csr`),
    "-CA",
    f("ca.crt"),
    "-CAkey",
    f("ca.key"),
    "-CAcreateserial",
    "-out",
    f(`${cn}.crt`),
    "-days",
    "1",
    "-extfile",
    ext,
  ]);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "tog-grpc-tls-"));
  openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    f("ca.key"),
    "-out",
    f("ca.crt"),
    "-days",
    "1",
    "-subj",
    "/CN=tog-test-ca",
  ]);
  issue("orchestrator");
  issue("gateway");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function withServer(
  serverConfig: Parameters<typeof serverCredentialsOf>[0],
  run: (port: number) => Promise<void>,
): Promise<void> {
  const fake = fakeOrchestrator();
  fake.behaviour.ping = async () => undefined;
  const server = await startOrchestratorServer({
    impl: fake.impl,
    host: "127.0.0.1",
    port: 0,
    logger: silent(),
    credentials: serverCredentialsOf(serverConfig),
  });
  try {
    await run(server.port);
  } finally {
    server.forceShutdown();
  }
}

async function ping(port: number, clientConfig: Parameters<typeof clientCredentialsOf>[0]): Promise<unknown> {
  const tls = clientCredentialsOf(clientConfig);
  const client = createOrchestratorClient({
    address: `127.0.0.1:${port}`,
    deadlineMs: 3_000,
    logger: silent(),
    credentials: tls.credentials,
    channelOptions: tls.channelOptions,
  });
  try {
    return await client.ping().then(
      () => "ok",
      (err: unknown) => err,
    );
  } finally {
    client.close();
  }
}

describe("gRPC TLS from certificate files", () => {
  it("server TLS: a client trusting the CA calls it; a plaintext client cannot", async () => {
    await withServer(
      { GRPC_TLS_CERT_FILE: f("orchestrator.crt"), GRPC_TLS_KEY_FILE: f("orchestrator.key") },
      async (port) => {
        expect(
          await ping(port, { ORCHESTRATOR_TLS_CA_FILE: f("ca.crt"), ORCHESTRATOR_TLS_SERVER_NAME: "localhost" }),
        ).toBe("ok");
        expect(await ping(port, {})).toBeInstanceOf(Error);
      },
    );
  });

  it("mutual TLS: only a client with a certificate from the client CA gets in", async () => {
    const server = {
      GRPC_TLS_CERT_FILE: f("orchestrator.crt"),
      GRPC_TLS_KEY_FILE: f("orchestrator.key"),
      GRPC_TLS_CLIENT_CA_FILE: f("ca.crt"),
    };
    await withServer(server, async (port) => {
      const trusting = { ORCHESTRATOR_TLS_CA_FILE: f("ca.crt"), ORCHESTRATOR_TLS_SERVER_NAME: "localhost" };
      expect(
        await ping(port, {
          ...trusting,
          ORCHESTRATOR_TLS_CERT_FILE: f("gateway.crt"),
          ORCHESTRATOR_TLS_KEY_FILE: f("gateway.key"),
        }),
      ).toBe("ok");
      expect(await ping(port, trusting)).toBeInstanceOf(Error);
    });
  });

  it("half a configuration or an unreadable file is a ConfigError", () => {
    expect(() => serverCredentialsOf({ GRPC_TLS_CERT_FILE: f("orchestrator.crt") })).toThrow(/go together/);
    expect(() => serverCredentialsOf({ GRPC_TLS_CERT_FILE: f("nope.crt"), GRPC_TLS_KEY_FILE: f("nope.key") })).toThrow(
      /cannot read/,
    );
    expect(() => clientCredentialsOf({ ORCHESTRATOR_TLS_CERT_FILE: f("gateway.crt") })).toThrow(
      /need ORCHESTRATOR_TLS_CA_FILE/,
    );
  });
});
