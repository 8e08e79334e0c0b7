import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

// One registry per process with the service name as a default label. Metric names follow
// Prometheus conventions (`tog_` prefix, base units, `_total` for counters); README lists them.

export interface Metrics {
  readonly registry: Registry;
  readonly service: string;
  counter<L extends string>(name: string, help: string, labelNames?: readonly L[]): Counter<L>;
  gauge<L extends string>(
    name: string,
    help: string,
    labelNames?: readonly L[],
    collect?: (gauge: Gauge<L>) => void | Promise<void>,
  ): Gauge<L>;
  histogram<L extends string>(name: string, help: string, labelNames?: readonly L[], buckets?: number[]): Histogram<L>;
  /** `tog_dependency_up{dependency}`: 1 when the check passes at scrape time. */
  dependency(name: string, check: () => Promise<unknown>, timeoutMs?: number): void;
}

export const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createMetrics(options: { service: string; defaultMetrics?: boolean }): Metrics {
  const registry = new Registry();
  registry.setDefaultLabels({ service: options.service });
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const checks = new Map<string, { check: () => Promise<unknown>; timeoutMs: number }>();
  let dependencyGauge: Gauge<"dependency"> | undefined;

  const metrics: Metrics = {
    registry,
    service: options.service,
    counter: (name, help, labelNames = []) =>
      new Counter({ name, help, labelNames: [...labelNames], registers: [registry] }),
    gauge: (name, help, labelNames = [], collect) =>
      new Gauge({
        name,
        help,
        labelNames: [...labelNames],
        registers: [registry],
        ...(collect
          ? {
              collect() {
                return collect(this);
              },
            }
          : {}),
      }),
    histogram: (name, help, labelNames = [], buckets = LATENCY_BUCKETS) =>
      new Histogram({ name, help, labelNames: [...labelNames], buckets, registers: [registry] }),
    dependency(name, check, timeoutMs = 1_000) {
      checks.set(name, { check, timeoutMs });
      dependencyGauge ??= metrics.gauge(
        "tog_dependency_up",
        "1 when the dependency answered its check at scrape time, else 0.",
        ["dependency"],
        async (g) => {
          await Promise.all(
            [...checks].map(async ([dep, c]) => {
              const ok = await Promise.race([
                c.check().then(
                  () => true,
                  () => false,
                ),
                new Promise<boolean>((r) => setTimeout(() => r(false), c.timeoutMs).unref()),
              ]);
              g.set({ dependency: dep }, ok ? 1 : 0);
            }),
          );
        },
      );
    },
  };
  return metrics;
}
