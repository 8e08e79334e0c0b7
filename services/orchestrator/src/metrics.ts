import { RUN_WORKERS, type Bus } from "@tog/bus";
import type { Metrics } from "@tog/ops";

// The orchestrator's and the workers' series (README "Metrics" lists them).

/** Work-queue depth and redeliveries, read from the `run-workers` consumer at scrape time. */
export function registerQueueMetrics(metrics: Metrics, bus: Bus): void {
  let info: Promise<{ num_pending: number; num_ack_pending: number; num_redelivered: number } | undefined> | undefined;
  // One consumer-info request per scrape, shared by the three gauges.
  const read = () => {
    info ??= bus.jsm.consumers
      .info(bus.streamName("RUNS"), RUN_WORKERS)
      .then((i) => ({
        num_pending: i.num_pending,
        num_ack_pending: i.num_ack_pending,
        num_redelivered: i.num_redelivered,
      }))
      .catch(() => undefined)
      .finally(() => setTimeout(() => (info = undefined), 100));
    return info;
  };
  metrics.gauge("tog_runs_queued", "Runs waiting in the RUNS work queue for a worker.", [], async (g) => {
    const i = await read();
    if (i) g.set(i.num_pending);
  });
  metrics.gauge("tog_runs_in_progress", "Runs delivered to a worker and not yet acknowledged.", [], async (g) => {
    const i = await read();
    if (i) g.set(i.num_ack_pending);
  });
  metrics.gauge(
    "tog_runs_redelivered",
    "Runs currently redelivered at least once (a worker died or handed them back).",
    [],
    async (g) => {
      const i = await read();
      if (i) g.set(i.num_redelivered);
    },
  );
}

export function orchestratorMetrics(metrics: Metrics) {
  const submitted = metrics.counter("tog_tasks_submitted_total", "Tasks accepted by SubmitTask.");
  const persisted = metrics.counter("tog_events_persisted_total", "Events written to the permanent log.");
  const batch = metrics.histogram("tog_event_persist_batch_seconds", "Duration of one event-log batch write.");
  return {
    onSubmitted: () => submitted.inc(),
    persister: {
      persisted: (n: number) => persisted.inc(n),
      batchWritten: (_size: number, ms: number) => batch.observe(ms / 1_000),
    },
  };
}

export function workerMetrics(metrics: Metrics, active: () => number) {
  const finished = metrics.counter("tog_tasks_finished_total", "Tasks that reached a terminal status, by status.", [
    "status",
  ]);
  const published = metrics.counter("tog_events_published_total", "Task events published, by type.", ["type"]);
  const runs = metrics.counter(
    "tog_runs_total",
    "Run deliveries handled, by outcome (finished, released, lost, duplicate, orphan, error).",
    ["outcome"],
  );
  metrics.gauge("tog_tasks_running", "Tasks this worker process is running now.", [], (g) => g.set(active()));
  return {
    onTaskFinished: (status: string) => finished.inc({ status }),
    onEventPublished: (event: { type: string }) => published.inc({ type: event.type }),
    onRunEnd: (outcome: string) => runs.inc({ outcome }),
  };
}
