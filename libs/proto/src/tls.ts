import { readFileSync } from "node:fs";
import { type ChannelCredentials, ServerCredentials, credentials } from "@grpc/grpc-js";
import { z } from "zod";
import { ConfigError, type ConfigShape } from "@tog/core";

// Optional TLS for the gateway → orchestrator gRPC link, for clusters without a service mesh
// (docs/security.md, "Internal links"). Certificates come from files (a mounted Secret); without
// them the link is plaintext, as inside a mesh or on one machine under `npm start`.

const file = (description: string) =>
  z.preprocess((v) => (v === "" ? undefined : v), z.string().min(1).optional()).describe(description);

/** Orchestrator (server) side. */
export const orchestratorServerTlsConfigShape = {
  GRPC_TLS_CERT_FILE: file(
    "TLS for the orchestrator's gRPC port: PEM certificate chain file (with GRPC_TLS_KEY_FILE). Unset: plaintext.",
  ),
  GRPC_TLS_KEY_FILE: file("TLS for the orchestrator's gRPC port: PEM private key file."),
  GRPC_TLS_CLIENT_CA_FILE: file(
    "Set: clients (the gateway) must present a certificate signed by this PEM CA (mutual TLS).",
  ),
} satisfies ConfigShape;

/** Gateway (client) side. */
export const orchestratorClientTlsConfigShape = {
  ORCHESTRATOR_TLS_CA_FILE: file("TLS to the orchestrator: PEM CA file that signed its certificate. Unset: plaintext."),
  ORCHESTRATOR_TLS_CERT_FILE: file(
    "Mutual TLS to the orchestrator: the gateway's PEM certificate file (with ORCHESTRATOR_TLS_KEY_FILE).",
  ),
  ORCHESTRATOR_TLS_KEY_FILE: file("Mutual TLS to the orchestrator: the gateway's PEM private key file."),
  ORCHESTRATOR_TLS_SERVER_NAME: file(
    "Name expected in the orchestrator's certificate when it differs from the address' host.",
  ),
} satisfies ConfigShape;

function read(path: string, name: string): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    throw new ConfigError(`${name}: cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
}

export function serverCredentialsOf(config: {
  GRPC_TLS_CERT_FILE?: string | undefined;
  GRPC_TLS_KEY_FILE?: string | undefined;
  GRPC_TLS_CLIENT_CA_FILE?: string | undefined;
}): ServerCredentials {
  const { GRPC_TLS_CERT_FILE: cert, GRPC_TLS_KEY_FILE: key, GRPC_TLS_CLIENT_CA_FILE: ca } = config;
  if (cert === undefined && key === undefined) {
    if (ca !== undefined)
      throw new ConfigError("GRPC_TLS_CLIENT_CA_FILE needs GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE");
    return ServerCredentials.createInsecure();
  }
  if (cert === undefined || key === undefined)
    throw new ConfigError("GRPC_TLS_CERT_FILE and GRPC_TLS_KEY_FILE go together");
  return ServerCredentials.createSsl(
    ca === undefined ? null : read(ca, "GRPC_TLS_CLIENT_CA_FILE"),
    [{ cert_chain: read(cert, "GRPC_TLS_CERT_FILE"), private_key: read(key, "GRPC_TLS_KEY_FILE") }],
    ca !== undefined,
  );
}

export interface ClientTls {
  credentials: ChannelCredentials;
  /** Channel options the credentials need (the expected server name). */
  channelOptions: Record<string, string>;
}

export function clientCredentialsOf(config: {
  ORCHESTRATOR_TLS_CA_FILE?: string | undefined;
  ORCHESTRATOR_TLS_CERT_FILE?: string | undefined;
  ORCHESTRATOR_TLS_KEY_FILE?: string | undefined;
  ORCHESTRATOR_TLS_SERVER_NAME?: string | undefined;
}): ClientTls {
  const { ORCHESTRATOR_TLS_CA_FILE: ca, ORCHESTRATOR_TLS_CERT_FILE: cert, ORCHESTRATOR_TLS_KEY_FILE: key } = config;
  if (ca === undefined) {
    if (cert !== undefined || key !== undefined)
      throw new ConfigError("ORCHESTRATOR_TLS_CERT_FILE/KEY_FILE need ORCHESTRATOR_TLS_CA_FILE");
    return { credentials: credentials.createInsecure(), channelOptions: {} };
  }
  if ((cert === undefined) !== (key === undefined))
    throw new ConfigError("ORCHESTRATOR_TLS_CERT_FILE and ORCHESTRATOR_TLS_KEY_FILE go together");
  return {
    credentials: credentials.createSsl(
      read(ca, "ORCHESTRATOR_TLS_CA_FILE"),
      key === undefined ? null : read(key, "ORCHESTRATOR_TLS_KEY_FILE"),
      cert === undefined ? null : read(cert, "ORCHESTRATOR_TLS_CERT_FILE"),
    ),
    channelOptions:
      config.ORCHESTRATOR_TLS_SERVER_NAME === undefined
        ? {}
        : { "grpc.ssl_target_name_override": config.ORCHESTRATOR_TLS_SERVER_NAME },
  };
}
