export {
  startE2eEnvironment,
  KEYS_CLI,
  type E2eEnvironment,
  type E2eOptions,
  type CreatedApiKey,
  type CreateApiKeyOptions,
  type Variant,
} from "./environment.ts";
export {
  request,
  newTraceparent,
  unknownApiKey,
  operationsOf,
  gatewayOperations,
  type JsonResponse,
  type OpenApiDocument,
} from "./http.ts";
export { deleteNatsStreams, deleteRedisKeys } from "./cleanup.ts";
export { e2eConfig } from "./config.ts";
export {
  startOwnRedis,
  startOwnNats,
  startOwnPostgres,
  ownServersDir,
  ownServersAvailable,
  type OwnServer,
  type OwnNats,
  type OwnNatsOptions,
  type StopSignal,
} from "./own-servers.ts";
// Stream clients as applications write them (reconnect with the last id), for `npm run chaos`.
export { followSse, followWs, sseUrl, wsUrl, type Connection } from "../stream/support.ts";
