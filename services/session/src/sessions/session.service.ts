import { ForbiddenError, isUuid, NotFoundError } from "@tog/core";
import type { SessionCache, SessionView } from "./session-cache.ts";
import type { SessionRecord, SessionRepository, SessionTaskRecord, TurnEventRecord } from "@tog/task-data";
import { validTitle } from "./title.ts";
import { historyBody, turnsBody } from "./session-views.ts";

// The session rules (docs/api.md "Sessions", "Authentication"; operations listSessions … deleteSession):
// - `{sessionId}` is the UUID (any case) or the external id the client submitted with.
// - A session is its owner's. Another user gets 403 on get, history, patch and delete; the
//   events endpoint answers 404 instead (as for a deleted session).
// - A deleted session is 404 on every read and on patch, and is left out of lists; deleting it
//   again is 204 for its owner.
// Views are read through the Redis cache (session-cache.ts); this service's own writes drop
// the session's entries before answering, the change feed drops them for everyone else's.
// Other services hint a change only for a session marked `views_cached`, so a session read from
// PostgreSQL is marked before anything of it is cached (`#watched`; docs/decisions.md
// "Sessions", Cache).

export const SESSION_NOT_FOUND = "Session not found";

export interface TurnTask extends SessionTaskRecord {
  events: TurnEventRecord[];
}

/** A response body as JSON text: built here, or cached bytes as Redis returned them. */
export type JsonBody = string | Buffer;

export interface SessionServiceOptions {
  repository: SessionRepository;
  cache: SessionCache;
}

export class SessionService {
  readonly #repo: SessionRepository;
  readonly #cache: SessionCache;

  constructor(options: SessionServiceOptions) {
    this.#repo = options.repository;
    this.#cache = options.cache;
  }

  list(userId: string, limit: number, offset: number): Promise<{ sessions: SessionRecord[]; total: number }> {
    return this.#repo.list(userId, limit, offset);
  }

  async get(userId: string, ref: string): Promise<SessionRecord> {
    return this.#readable(userId, ref, "forbidden");
  }

  /** The history's response body: sent as it is, from the cache when it holds the current one. */
  async history(userId: string, ref: string): Promise<JsonBody> {
    const session = await this.#readable(userId, ref, "forbidden");
    return this.#cachedBody(session.id, "history", async () => ({
      body: historyBody(session.id, await this.#repo.tasks(session.id)),
      cacheable: true,
    }));
  }

  /** A page of turns' response body, as `history`. */
  async turns(
    userId: string,
    ref: string,
    page: { limit: number; offset: number; includePayload: boolean },
  ): Promise<JsonBody> {
    const session = await this.#readable(userId, ref, "not-found");
    const view: SessionView = { turns: `${page.limit}:${page.offset}:${page.includePayload ? 1 : 0}` };
    return this.#cachedBody(session.id, view, async () => {
      const [totalCount, tasks] = await Promise.all([
        this.#repo.countTasks(session.id),
        this.#repo.tasks(session.id, { limit: page.limit, offset: page.offset }),
      ]);
      const events = await this.#repo.turnEvents(
        tasks.map((t) => t.id),
        page.includePayload,
      );
      const byTask = new Map<string, TurnEventRecord[]>();
      for (const e of events) {
        const list = byTask.get(e.taskId) ?? [];
        list.push(e);
        byTask.set(e.taskId, list);
      }
      const turns = tasks.map((t) => ({ ...t, events: byTask.get(t.id) ?? [] }));
      return {
        body: turnsBody(session.id, page, totalCount, turns),
        // A page changes until each of its tasks is terminal with its terminal event stored (the
        // event log lags the status by a few milliseconds); only settled pages are cached.
        cacheable: turns.every((t) => t.completedAt !== null && t.events.at(-1)?.terminal === true),
      };
    });
  }

  async rename(userId: string, ref: string, rawTitle: string): Promise<SessionRecord> {
    const title = validTitle(rawTitle);
    const session = await this.#readable(userId, ref, "forbidden");
    const updated = await this.#repo.rename(session.id, title);
    await this.#cache.invalidate(session.id);
    if (!updated) throw new NotFoundError(SESSION_NOT_FOUND);
    return updated;
  }

  /** Soft delete; idempotent for the owner. */
  async remove(userId: string, ref: string): Promise<void> {
    const session = await this.#find(userId, ref, { fresh: true });
    if (!session) throw new NotFoundError(SESSION_NOT_FOUND);
    if (session.userId !== userId) throw new ForbiddenError();
    if (session.deletedAt === null) await this.#repo.softDelete(session.id, userId);
    await this.#cache.invalidate(session.id);
  }

  /** Owned and not deleted; another user's session is 403, or 404 where the API hides it (its turns). */
  async #readable(userId: string, ref: string, foreign: "forbidden" | "not-found"): Promise<SessionRecord> {
    const session = await this.#find(userId, ref);
    if (!session || session.deletedAt !== null) throw new NotFoundError(SESSION_NOT_FOUND);
    if (session.userId !== userId)
      throw foreign === "forbidden" ? new ForbiddenError() : new NotFoundError(SESSION_NOT_FOUND);
    return session;
  }

  /** The session a path segment names: a UUID, else an external id of this user (external ids are per user). */
  async #find(userId: string, ref: string, options: { fresh?: boolean } = {}): Promise<SessionRecord | null> {
    if (isUuid(ref)) {
      const id = ref.toLowerCase();
      return options.fresh
        ? this.#repo.findById(id)
        : this.#cached(
            id,
            "meta",
            () => this.#loadWatched(id),
            (s) => s !== null,
          );
    }
    if (!options.fresh) {
      const known = await this.#cache.refOf(userId, ref);
      if (known !== undefined) {
        const session = await this.#cached(
          known,
          "meta",
          () => this.#loadWatched(known),
          (s) => s !== null,
        );
        // Purged and recreated under the same external id: the mapping is stale.
        if (session?.externalId === ref && session.userId === userId) return session;
      }
    }
    const session = await this.#watched(await this.#repo.findByExternalId(userId, ref));
    if (session) await this.#cache.rememberRef(userId, ref, session.id);
    return session;
  }

  /**
   * A session as read from PostgreSQL, marked first if views of it may be cached from now on:
   * without the mark the orchestrator and the workers send no hint when it changes. The mark's
   * statement returns the row as it is after every writer that saw no mark, and whatever is
   * read after it is newer still, so nothing cached can miss a change.
   */
  async #watched(session: SessionRecord | null): Promise<SessionRecord | null> {
    if (!session || session.viewsCached || !this.#cache.enabled) return session;
    return this.#repo.markViewsCached(session.id);
  }

  async #loadWatched(id: string): Promise<SessionRecord | null> {
    return this.#watched(await this.#repo.findById(id));
  }

  async #cached<T>(
    sessionId: string,
    view: "meta",
    build: () => Promise<T>,
    cacheable: (value: T) => boolean,
  ): Promise<T> {
    const hit = await this.#cache.read<T>(sessionId, view);
    if (hit.value !== undefined) return hit.value;
    const value = await build();
    if (cacheable(value)) await this.#cache.write(sessionId, view, hit.stamp, value);
    return value;
  }

  async #cachedBody(
    sessionId: string,
    view: Exclude<SessionView, "meta">,
    build: () => Promise<{ body: string; cacheable: boolean }>,
  ): Promise<JsonBody> {
    const hit = await this.#cache.readBody(sessionId, view);
    if (hit.value !== undefined) return hit.value;
    const { body, cacheable } = await build();
    if (cacheable) await this.#cache.writeBody(sessionId, view, hit.stamp, body);
    return body;
  }
}
