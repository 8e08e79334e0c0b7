import { useEffect, useMemo, useState } from "preact/hooks";
import type { ApiClient, TaskEvent } from "./api.ts";
import { followTaskEvents, type StreamState } from "./stream.ts";

export interface TaskEvents {
  events: TaskEvent[];
  state: StreamState;
  detail: string | undefined;
  /** Highest seq received (0 before the first event). */
  lastSeq: number;
}

/** A task's events from the start, then live, resumed across dropped connections (stream.ts). */
export function useTaskEvents(client: ApiClient, taskId: string): TaskEvents {
  const [events, setEvents] = useState<TaskEvent[]>([]);
  const [status, setStatus] = useState<{ state: StreamState; detail: string | undefined }>({
    state: "connecting",
    detail: undefined,
  });

  useEffect(() => {
    setEvents([]);
    const controller = new AbortController();
    // Chunks can arrive faster than frames are drawn: collect them, render once per frame.
    let pending: TaskEvent[] = [];
    let scheduled = false;
    const flush = () => {
      scheduled = false;
      const batch = pending;
      pending = [];
      if (batch.length > 0) setEvents((prev) => [...prev, ...batch]);
    };
    followTaskEvents({
      baseUrl: client.baseUrl,
      taskId,
      headers: client.authHeaders(),
      signal: controller.signal,
      onEvent: (e) => {
        pending.push(e);
        if (!scheduled) {
          scheduled = true;
          requestAnimationFrame(flush);
        }
      },
      onState: (state, detail) => setStatus({ state, detail }),
    }).catch((err: unknown) => setStatus({ state: "failed", detail: (err as Error).message }));
    return () => controller.abort();
  }, [client, taskId]);

  const lastSeq = useMemo(() => events.at(-1)?.seq ?? 0, [events]);
  return { events, state: status.state, detail: status.detail, lastSeq };
}
