// Every service answers /metrics and /health on its own ops port (METRICS_PORT) with the
// series README lists, after real traffic went through the system.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

let env: E2eEnvironment;

beforeAll(async () => {
  env = await startE2eEnvironment({ env: { RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" } });
  const submitted = await request<{ task_id: string }>(`${env.baseUrl}/tasks`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ query: "Say hello", mode: "simple" }),
  });
  expect(submitted.status).toBe(200);
  for (let i = 0; i < 200; i++) {
    const task = await request<{ status: string }>(`${env.baseUrl}/tasks/${submitted.body.task_id}`);
    if (task.body.status === "TASK_STATUS_COMPLETED") break;
    await new Promise((r) => setTimeout(r, 50));
  }
  await request(`${env.baseUrl}/sessions`);
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const scrape = async (name: string) => {
  const url = env.service(name).metricsUrl;
  expect(url, `${name} has an ops port`).toBeDefined();
  const res = await request(`${url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toContain("text/plain");
  return res.text;
};

describe("ops port", () => {
  it.for([
    [
      "gateway",
      [
        'tog_http_requests_total{method="POST",route="/api/v1/tasks",status="200",service="gateway"}',
        "tog_http_request_duration_seconds_bucket",
        'tog_dependency_up{dependency="orchestrator",service="gateway"} 1',
        'tog_dependency_up{dependency="redis",service="gateway"} 1',
      ],
    ],
    [
      "session",
      [
        'tog_http_requests_total{method="GET",route="/api/v1/sessions"',
        'tog_dependency_up{dependency="postgres",service="session"} 1',
      ],
    ],
    ["model-catalog", ["tog_http_requests_total", "process_cpu_seconds_total"]],
    [
      "stream",
      [
        'tog_stream_connections{kind="sse",service="stream"}',
        "tog_stream_events_delivered_total",
        'tog_dependency_up{dependency="nats",service="stream"} 1',
      ],
    ],
    [
      "orchestrator",
      [
        'tog_tasks_submitted_total{service="orchestrator"} 1',
        "tog_events_persisted_total",
        "tog_runs_queued",
        "tog_runs_in_progress",
        "tog_runs_redelivered",
        'tog_dependency_up{dependency="nats",service="orchestrator"} 1',
      ],
    ],
    [
      "worker",
      [
        'tog_tasks_finished_total{status="COMPLETED",service="worker"} 1',
        'tog_events_published_total{type="WORKFLOW_COMPLETED",service="worker"} 1',
        "tog_tasks_running",
        'tog_runs_total{outcome="finished",service="worker"} 1',
      ],
    ],
  ] as const)("%s exposes its series", async ([name, series]) => {
    const text = await scrape(name);
    for (const s of series) expect(text, `${name}: ${s}`).toContain(s);
  });

  it("answers /health on the ops port of the processes without a public HTTP port", async () => {
    for (const name of ["orchestrator", "worker"]) {
      const res = await request(`${env.service(name).metricsUrl}/health`);
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ status: "healthy" });
    }
  });
});
