// Runs one scenario (scenarios.ts) on a system of its own: the load, the fault, the drain, then
// the verdict from the system's database. Used by the report (chaos.ts) and by the e2e
// versions of the scenarios (chaos/test).
import { randomUUID } from "node:crypto";
import { loadavg } from "node:os";
import { startLoad } from "./load.ts";
import type { ChaosSettings, FaultResult, Scenario, ScenarioContext } from "./scenarios.ts";
import type { StreamVerdict } from "./streams.ts";
import { startSystem } from "./system.ts";
import { drain, verify, type Verdict } from "./verify.ts";

/** The machine is shared: its load average (1, 5, 15 min) goes into the report. */
export const loadAverage = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(" / ");

export interface Row {
  scenario: string;
  /** Load average of the machine when the scenario ended. */
  loadAverage?: string;
  description: string;
  verdict: Verdict;
  /** Requests answered 5xx without Retry-After, 4xx other than 429, or not at all. */
  failedRequests: number;
  /** Requests shed with 429/503 + Retry-After (the client retried them). */
  shedRequests: number;
  failedByStatus: Record<string, number>;
  /** One response body (or error) per kind of failure. */
  failureSamples: Record<string, string>;
  recoveryMs: number | null;
  recoveryMeaning: string;
  /** Scenarios with stream subscribers: how their streams went. */
  streams?: StreamVerdict;
  /** Figures a scenario measured beyond the verdict (FaultResult.figures). */
  figures?: Record<string, number>;
  drainMs: number;
  notes: string[];
  /** Distinct error log lines of the services (message and error text), with counts. */
  serviceErrors: Record<string, number>;
  error?: string;
}

/** A probe that takes longer means the system did not recover: the scenario fails instead of hanging. */
const PROBE_TIMEOUT_MS = 90_000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface RunOptions {
  settings: ChaosSettings;
  /** How long accepted tasks may take to finish after the load (CHAOS_DRAIN_SECONDS). */
  drainSeconds: number;
}

/** One scenario on a fresh system of its own, under the load, then the verdict from its database. */
export async function runScenario(scenario: Scenario, { settings, drainSeconds }: RunOptions): Promise<Row> {
  const log = (m: string) => process.stdout.write(`[chaos ${scenario.name}] ${m}\n`);
  log(`starting: ${scenario.description}`);
  const sys = await startSystem(scenario.system);
  const headers = { "X-API-Key": sys.apiKey, "Content-Type": "application/json" };
  const probeIds: string[] = [];
  try {
    await scenario.prepare?.(sys);
    const offered = scenario.load?.(settings) ?? { tasks: settings.tasks, rate: settings.rate };
    log(`offering ${offered.tasks} tasks at ${offered.rate}/s`);
    const load = startLoad({ baseUrl: sys.env.baseUrl, apiKey: sys.apiKey, tasks: offered.tasks, rate: offered.rate });
    const ctx: ScenarioContext = {
      settings,
      sys,
      load,
      log,
      async probe() {
        const started = Date.now();
        const key = randomUUID();
        let taskId: string | undefined;
        while (!taskId) {
          const res = await fetch(`${sys.env.baseUrl}/tasks`, {
            method: "POST",
            headers: { ...headers, "Idempotency-Key": key },
            body: JSON.stringify({ query: "Say hi", mode: "simple" }),
            signal: AbortSignal.timeout(10_000),
          }).catch(() => undefined);
          if (res?.ok) taskId = ((await res.json()) as { task_id: string }).task_id;
          else await sleep(200);
          if (!taskId && Date.now() - started > PROBE_TIMEOUT_MS)
            throw new Error(`no submit accepted within ${PROBE_TIMEOUT_MS} ms`);
        }
        probeIds.push(taskId);
        for (;;) {
          const res = await fetch(`${sys.env.baseUrl}/tasks/${taskId}`, {
            headers,
            signal: AbortSignal.timeout(10_000),
          }).catch(() => undefined);
          const status = res?.ok ? ((await res.json()) as { status: string }).status : "";
          if (/COMPLETED|FAILED|CANCELLED|TIMEOUT/.test(status)) return Date.now() - started;
          if (Date.now() - started > PROBE_TIMEOUT_MS)
            throw new Error(`probe task ${taskId} not finished within ${PROBE_TIMEOUT_MS} ms`);
          await sleep(100);
        }
      },
      async readinessDuring(fn) {
        const samples: number[] = [];
        let running = true;
        const sampler = (async () => {
          while (running) {
            const res = await fetch(`${sys.env.baseUrl}/readiness`, { signal: AbortSignal.timeout(3_000) }).catch(
              () => undefined,
            );
            samples.push(res?.status ?? 0);
            await sleep(250);
          }
        })();
        try {
          await fn();
        } finally {
          running = false;
          await sampler;
        }
        return samples;
      },
      async accepted(n) {
        while (load.submissions.filter((s) => s.taskId).length < n) await sleep(100);
      },
    };
    const [fault] = await Promise.all([scenario.fault(ctx) as Promise<FaultResult>, load.submitted]);
    const taskIds = load.submissions.flatMap((s) => (s.taskId ? [s.taskId] : []));
    log(`load submitted (${taskIds.length}/${load.submissions.length} accepted); draining`);
    const drainMs = await drain(sys.databaseUrl, taskIds, drainSeconds * 1_000);
    load.stop();
    const submitter = { userId: sys.userId, baseUrl: sys.env.baseUrl };
    const verdict = await verify(sys.databaseUrl, load.submissions, submitter, [...probeIds, ...sys.ownTaskIds]);
    // A 409 on an approval is a decision already taken (the approver retried): not a failure.
    const failures = load.failures.filter((f) => !(f.what === "approve" && f.status === 409));
    const failedByStatus: Record<string, number> = {};
    const failureSamples: Record<string, string> = {};
    for (const f of failures) {
      const k = `${f.what} ${f.status || "no answer"}`;
      failedByStatus[k] = (failedByStatus[k] ?? 0) + 1;
      failureSamples[k] ??= f.error;
    }
    const serviceErrors: Record<string, number> = {};
    for (const service of [...sys.env.stack.services, ...sys.instances]) {
      for (const r of service.logs()) {
        const callFailed = r.level === "warn" && r.msg === "orchestrator call failed";
        if (r.level !== "error" && r.level !== "fatal" && !callFailed) continue;
        const err = r.err as { type?: string; message?: string; code?: string } | undefined;
        const grpc = callFailed ? ` [${String(r.grpc_code)}: ${String(r.grpc_details).slice(0, 80)}]` : "";
        const line = `${service.name.replace(/[#*].*/, "")}: ${String(r.msg)}${grpc}${err ? ` (${err.type ?? ""} ${err.code ?? ""} ${String(err.message ?? "").slice(0, 120)})` : ""}`;
        serviceErrors[line] = (serviceErrors[line] ?? 0) + 1;
      }
    }
    const row: Row = {
      scenario: scenario.name,
      description: scenario.description,
      verdict,
      failedRequests: failures.filter((f) => !f.shed).length,
      shedRequests: failures.filter((f) => f.shed).length,
      failedByStatus,
      failureSamples,
      recoveryMs: fault.recoveryMs,
      recoveryMeaning: scenario.recoveryMeaning,
      ...(fault.streams ? { streams: fault.streams } : {}),
      ...(fault.figures ? { figures: fault.figures } : {}),
      drainMs,
      notes: fault.notes,
      serviceErrors,
      loadAverage: loadAverage(),
    };
    log(
      JSON.stringify({
        verdict,
        failedByStatus,
        recoveryMs: fault.recoveryMs,
        notes: fault.notes,
        serviceErrors,
        failureSamples,
      }),
    );
    return row;
  } finally {
    await sys.close();
  }
}
