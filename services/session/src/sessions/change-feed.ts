import { systemSubjects, type Bus } from "@tog/bus";
import type { Logger } from "@tog/core";

// Listens for session change hints on core NATS (`<prefix>.sessions.changed`, payload: the
// session id). The writers of sessions and tasks (orchestrator submit and cancel, workers' mode
// and finish) publish one after their commit — the submit and the finish only for a session
// this service marked before caching it (session.service.ts `#watched`); this service's own
// writes drop the cache directly. While the NATS connection is down hints are lost, so `onDown`
// bypasses the cache and every (re)connect calls `onUp`, which makes everything cached before
// stale.
// PostgreSQL NOTIFY did this before; it serialised every notifying commit (docs/decisions.md).

export interface ChangeFeedOptions {
  bus: Bus;
  logger: Logger;
  /** The sessions changed since the last call (each once). */
  onChange: (sessionIds: string[]) => void;
  /** Called once listening (again): changes may have been missed while it was not. */
  onUp: () => Promise<void> | void;
  /** The connection dropped: changes are not seen until `onUp`. */
  onDown: () => void;
}

export interface ChangeFeed {
  /** Resolves once the subscription is registered with the server. */
  readonly ready: Promise<void>;
  stop(): Promise<void>;
}

const decoder = new TextDecoder();

export function startChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  const { bus } = options;
  const logger = options.logger.child({ component: "session-change-feed" });
  // Hints that arrive within one tick of the event loop are handed over once per session (a
  // task's hints come in bursts, and one cache invalidation per session serves them all).
  let pending = new Set<string>();
  const flush = () => {
    const ids = pending;
    pending = new Set();
    options.onChange([...ids]);
  };
  const sub = bus.nc.subscribe(systemSubjects(bus.prefix).sessionChanges, {
    callback: (err, msg) => {
      if (err) return;
      const id = decoder.decode(msg.data);
      if (id === "") return;
      if (pending.size === 0) setImmediate(flush);
      pending.add(id);
    },
  });
  let stopped = false;
  void (async () => {
    for await (const s of bus.nc.status()) {
      if (stopped) break;
      if (s.type === "disconnect") options.onDown();
      else if (s.type === "reconnect") {
        await options.onUp();
        logger.info("listening for session changes again");
      }
    }
  })().catch((err: unknown) => logger.warn({ err }, "change feed status loop ended"));

  const ready = bus.nc.flush().then(async () => {
    await options.onUp();
    logger.info("listening for session changes");
  });
  return {
    ready,
    async stop() {
      stopped = true;
      sub.unsubscribe();
    },
  };
}
