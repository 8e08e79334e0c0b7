import pg from "pg";
import type { Logger } from "@tog/core";

// LISTENs on `tog_session_changed`: PostgreSQL triggers on `sessions` and `tasks` (migration
// 20261123000000_session_changes) send a session's id whenever a transaction that changed the
// session or one of its tasks commits, whoever wrote it (orchestrator, worker, this service).
// One dedicated connection (LISTEN needs a session of its own, outside the pool). When it
// drops, notifications sent meanwhile are lost: `onDown`, and every (re)connect calls `onUp`.

export const SESSION_CHANGE_CHANNEL = "tog_session_changed";

export interface ChangeFeedOptions {
  databaseUrl: string;
  logger: Logger;
  onChange: (sessionId: string) => void;
  /** Called once listening (again): changes may have been missed while it was not. */
  onUp: () => Promise<void> | void;
  /** The connection dropped: changes are not seen until `onUp`. */
  onDown: () => void;
  /** Longest wait between reconnect attempts (default 10 s). */
  maxBackoffMs?: number;
}

export interface ChangeFeed {
  /** Resolves once the first LISTEN is in place. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

export function startChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  const logger = options.logger.child({ component: "session-change-feed" });
  const maxBackoff = options.maxBackoffMs ?? 10_000;
  let client: pg.Client | undefined;
  let stopped = false;
  let attempt = 0;
  let timer: NodeJS.Timeout | undefined;
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });

  const connect = async (): Promise<void> => {
    if (stopped) return;
    const c = new pg.Client({ connectionString: options.databaseUrl, application_name: "session-change-feed" });
    client = c;
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      options.onDown();
      c.removeAllListeners("notification");
      c.end().catch(() => undefined);
      if (stopped) return;
      logger.warn({ err }, "change feed connection lost; reconnecting");
      schedule();
    };
    c.on("error", onLost);
    c.on("end", () => onLost());
    c.on("notification", (n) => {
      if (n.channel === SESSION_CHANGE_CHANNEL && n.payload) options.onChange(n.payload);
    });
    try {
      await c.connect();
      await c.query(`LISTEN ${SESSION_CHANGE_CHANNEL}`);
      attempt = 0;
      await options.onUp();
      logger.info("listening for session changes");
      markReady();
    } catch (err) {
      onLost(err as Error);
    }
  };

  const schedule = () => {
    const delay = Math.min(maxBackoff, 250 * 2 ** attempt++) * (0.75 + Math.random() / 2);
    timer = setTimeout(() => void connect(), delay);
    timer.unref();
  };

  void connect();

  return {
    ready,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      const c = client;
      client = undefined;
      if (c) await c.end().catch(() => undefined);
    },
  };
}
