import { connect, type NatsConnection, type Status } from "@nats-io/transport-node";
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from "@nats-io/jetstream";
import { UpstreamUnavailableError, type Logger } from "@tog/core";
import { assertPrefix, streamNameFor, subjectFor } from "./naming.ts";
import { settleRequestsWithoutError } from "./settled-requests.ts";

export interface BusOptions {
  /** One URL or several of one cluster, comma-separated. */
  url: string;
  /** Client name shown by the server's monitoring (service name). */
  name: string;
  /** Subject prefix; stream names use it upper-cased. */
  prefix: string;
  logger: Logger;
  /** Base wait between reconnect attempts (default 500 ms: back within about a second of the server, docs/reliability.md). */
  reconnectTimeWaitMs?: number;
  /** Upper bound of the random delay added to each wait (default 500 ms), so clients don't reconnect in lockstep. */
  reconnectJitterMs?: number;
  /** Client PING interval; two missed PONGs mark the connection stale and trigger a reconnect (default 20 s). */
  pingIntervalMs?: number;
}

export interface Bus {
  readonly nc: NatsConnection;
  readonly js: JetStreamClient;
  readonly jsm: JetStreamManager;
  readonly prefix: string;
  /** `<prefix>.<parts…>`; each part is one subject token. */
  subject(...parts: string[]): string;
  /** `<PREFIX>_<BASE>`. */
  streamName(base: string): string;
  /** Server round trip with a deadline (readiness); resolves with the RTT in ms. */
  ping(timeoutMs?: number): Promise<number>;
  /** Drains subscriptions and consumers, flushes, then closes. Rejects when already closed. */
  drain(): Promise<void>;
  /** Like drain, but idempotent and never rejects: falls back to a hard close. */
  close(): Promise<void>;
}

/**
 * Connects to NATS and JetStream. The connection reconnects forever (jittered waits);
 * every status change is logged. The initial connect fails fast so a misconfigured
 * service does not start.
 */
export async function connectBus(options: BusOptions): Promise<Bus> {
  assertPrefix(options.prefix);
  const { logger, prefix } = options;
  const servers = options.url
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);

  settleRequestsWithoutError();
  let nc: NatsConnection;
  try {
    nc = await connect({
      servers,
      name: options.name,
      maxReconnectAttempts: -1,
      reconnectTimeWait: options.reconnectTimeWaitMs ?? 500,
      reconnectJitter: options.reconnectJitterMs ?? 500,
      pingInterval: options.pingIntervalMs ?? 20_000,
      maxPingOut: 2,
      // Otherwise every request (each JetStream publish) builds an Error for its stack up front,
      // used only if it fails: a measurable share of a worker's CPU (docs/performance.md).
      noAsyncTraces: true,
    });
  } catch (err) {
    throw new UpstreamUnavailableError(`Cannot connect to NATS at ${servers.join(",")}`, { cause: err });
  }
  logStatus(nc, logger);

  let jsm: JetStreamManager;
  try {
    // Asks the server for the account's JetStream info, so a server without JetStream fails here.
    jsm = await jetstreamManager(nc);
  } catch (err) {
    await nc.close().catch(() => undefined);
    throw new UpstreamUnavailableError("NATS JetStream is not available", { cause: err });
  }
  const js = jetstream(nc);
  logger.info({ server: nc.getServer(), version: nc.info?.version }, "nats connected");

  return {
    nc,
    js,
    jsm,
    prefix,
    subject: (...parts) => subjectFor(prefix, parts),
    streamName: (base) => streamNameFor(prefix, base),
    async ping(timeoutMs = 1_000) {
      if (nc.isClosed()) throw new UpstreamUnavailableError("NATS connection is closed");
      // While reconnecting, the PING waits in the client's buffer; the deadline turns that into a failure.
      const rtt = nc.rtt().catch((err: unknown) => {
        throw new UpstreamUnavailableError("NATS ping failed", { cause: err });
      });
      return withDeadline(rtt, timeoutMs, () => new UpstreamUnavailableError("NATS ping timed out"));
    },
    drain: () => nc.drain(),
    async close() {
      if (nc.isClosed()) return;
      try {
        if (!nc.isDraining()) await nc.drain();
        else await nc.closed();
      } catch (err) {
        logger.warn({ err }, "nats drain failed; closing");
        await nc.close().catch(() => undefined);
      }
    },
  };
}

function logStatus(nc: NatsConnection, logger: Logger): void {
  void (async () => {
    for await (const s of nc.status()) logOne(logger, s);
  })().catch((err: unknown) => logger.warn({ err }, "nats status monitor stopped"));
  void nc.closed().then((err) => {
    if (err) logger.error({ err }, "nats connection closed with error");
    else logger.info("nats connection closed");
  });
}

function logOne(logger: Logger, s: Status): void {
  switch (s.type) {
    case "disconnect":
      logger.warn({ server: s.server }, "nats disconnected");
      break;
    case "reconnecting":
      logger.debug("nats reconnecting");
      break;
    case "reconnect":
      logger.info({ server: s.server }, "nats reconnected");
      break;
    case "error":
      logger.error({ err: s.error }, "nats server error");
      break;
    case "staleConnection":
      logger.warn("nats connection stale");
      break;
    case "ldm":
      logger.warn({ server: s.server }, "nats server entering lame duck mode");
      break;
    case "slowConsumer":
      logger.warn({ subject: s.sub.getSubject(), pending: s.pending }, "nats slow consumer");
      break;
    default:
      logger.debug({ status: s.type }, "nats status");
  }
}

async function withDeadline<T>(promise: Promise<T>, ms: number, onTimeout: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(onTimeout()), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
