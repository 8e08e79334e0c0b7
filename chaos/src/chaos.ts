// `npm run chaos [-- scenario…]`: every scenario on a system of its own (own PostgreSQL, Redis,
// NATS and service processes), under a steady load of tasks of every kind, then the verdict from
// the database. Writes chaos/results/chaos-<UTC start>.md (the table) and .json (every figure).
// A report with figures, not a timed test; the small e2e versions are in chaos/test and
// tests-e2e/chaos.
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import path from "node:path";
import { loadConfig } from "@tog/core";
import { ownServersAvailable } from "@tog/tests-e2e";
import { z } from "zod";
import { loadAverage, runScenario, type Row } from "./run-scenario.ts";
import { SCENARIOS, type ChaosSettings } from "./scenarios.ts";

const config = loadConfig({
  CHAOS_TASKS: z.coerce.number().int().min(10).default(300).describe("chaos: tasks submitted per scenario."),
  CHAOS_RATE: z.coerce.number().min(1).default(10).describe("chaos: submissions started per second."),
  CHAOS_WORKER_TASKS: z.coerce
    .number()
    .int()
    .min(10)
    .default(1000)
    .describe("chaos: tasks submitted during the workers-sigkill scenario (every kind, writes included)."),
  CHAOS_STREAM_SUBSCRIBERS: z.coerce
    .number()
    .int()
    .min(10)
    .default(1000)
    .describe("chaos: SSE and WebSocket subscribers of the stream-instance-kill scenario."),
  CHAOS_ROLLING_SUBSCRIBERS: z.coerce
    .number()
    .int()
    .min(0)
    .default(100)
    .describe("chaos: SSE and WebSocket subscribers kept open through the rolling restart."),
  CHAOS_DRAIN_SECONDS: z.coerce
    .number()
    .int()
    .min(10)
    .default(180)
    .describe("chaos: how long accepted tasks may take to finish after the load."),
});

const settings: ChaosSettings = {
  tasks: config.CHAOS_TASKS,
  rate: config.CHAOS_RATE,
  workerTasks: config.CHAOS_WORKER_TASKS,
  streamSubscribers: config.CHAOS_STREAM_SUBSCRIBERS,
  rollingSubscribers: config.CHAOS_ROLLING_SUBSCRIBERS,
  natsPauseSeconds: 20,
};

let loadStart = loadAverage();
const machine = describeMachine();

function streams(r: Row): string {
  const s = r.streams;
  if (!s) return "–";
  const gaveUp = s.gaveUp || s.incomplete ? ` (gave up ${s.gaveUp}, incomplete ${s.incomplete})` : "";
  return `${s.subscriptions}: ${s.resumed} / ${s.gaps} / ${s.duplicates}${gaveUp}`;
}

function table(rows: Row[]): string {
  const head =
    "| Scenario | Submitted | Not accepted | Completed | Failed | Lost | Duplicate tasks | Accepted after giving up | Duplicated effects | Writes: once / lost / duplicated | Seq gaps | Missing from log | Stream subscriptions: resumed / gaps / duplicates | Failed requests | Shed (Retry-After) | Recovery |";
  const sep = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|";
  const lines = rows.map((r) => {
    const v = r.verdict;
    const rec = r.recoveryMs === null ? "–" : `${(r.recoveryMs / 1000).toFixed(1)} s`;
    return `| ${r.scenario}${r.error ? " (error)" : ""} | ${v.submitted} | ${v.refused} | ${v.completed} | ${v.failed} | ${v.lost} | ${v.duplicateTasks} | ${v.acceptedAfterGivingUp} | ${v.duplicatedEffects} | ${v.writes ? `${v.writesOnce}/${v.writes} / ${v.writesLost} / ${v.writesDuplicated}` : "–"} | ${v.seqGaps} | ${v.missingFromLog} | ${streams(r)} | ${r.failedRequests} | ${r.shedRequests} | ${rec} |`;
  });
  return [head, sep, ...lines].join("\n");
}

/** Read once at the start: a commit made while the run goes on is not the code that ran. */
function describeMachine(): string {
  let commit = "unknown";
  try {
    commit = execFileSync("git", ["rev-parse", "--short", "HEAD"]).toString().trim();
  } catch {
    // not a checkout
  }
  return `${cpus().length} cores (${cpus()[0]?.model ?? "?"}), ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}, commit ${commit}`;
}

/** Writes (and rewrites after each scenario, so a run cut short keeps what it measured) the report files. */
function writeReport(startedAt: Date, rows: Row[]): string {
  const stamp = startedAt.toISOString().replace(/[:T]/g, "-").slice(0, 19);
  const dir = path.join(import.meta.dirname, "..", "results");
  mkdirSync(dir, { recursive: true });
  const md = [
    `# Chaos run ${startedAt.toISOString()}`,
    "",
    `Machine: ${machine}; load average at the start ${loadStart}. ${config.CHAOS_TASKS} tasks per scenario (workers-sigkill: ${config.CHAOS_WORKER_TASKS}) at ${config.CHAOS_RATE}/s (simple, standard, complex, tool, approval, write in turn).`,
    "",
    table(rows),
    "",
    ...rows.flatMap((r) => [
      `- **${r.scenario}**: ${r.description}. Recovery: ${r.recoveryMeaning}. Drain ${(r.drainMs / 1000).toFixed(1)} s.` +
        (r.loadAverage ? ` Load average at its end ${r.loadAverage}.` : "") +
        (r.notes.length ? ` ${r.notes.join("; ")}.` : "") +
        (Object.keys(r.failedByStatus).length
          ? ` Answers other than 2xx: ${Object.entries(r.failedByStatus)
              .map(([k, n]) => `${k} ×${n}`)
              .join(", ")}.`
          : "") +
        (r.error ? ` Error: ${r.error}` : ""),
    ]),
    "",
  ].join("\n");
  writeFileSync(path.join(dir, `chaos-${stamp}.md`), md);
  writeFileSync(path.join(dir, `chaos-${stamp}.json`), JSON.stringify({ startedAt, machine, config, rows }, null, 2));
  return md;
}

async function main() {
  if (!ownServersAvailable()) {
    process.stderr.write(
      "chaos needs nats-server, redis-server and PostgreSQL's binaries (/usr/lib/postgresql/<v>/bin)\n",
    );
    process.exit(2);
  }
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !SCENARIOS.some((s) => s.name === w));
  if (unknown.length > 0) {
    process.stderr.write(
      `unknown scenario(s): ${unknown.join(", ")}; known: ${SCENARIOS.map((s) => s.name).join(", ")}\n`,
    );
    process.exit(2);
  }
  const chosen = wanted.length > 0 ? SCENARIOS.filter((s) => wanted.includes(s.name)) : SCENARIOS;
  const startedAt = new Date();
  loadStart = loadAverage();
  const rows: Row[] = [];
  for (const scenario of chosen) {
    try {
      rows.push(await runScenario(scenario, { settings, drainSeconds: config.CHAOS_DRAIN_SECONDS }));
      writeReport(startedAt, rows);
    } catch (err) {
      process.stderr.write(`[chaos ${scenario.name}] failed: ${(err as Error).stack}\n`);
      rows.push({
        scenario: scenario.name,
        description: scenario.description,
        verdict: {
          submitted: 0,
          refused: 0,
          completed: 0,
          failed: 0,
          lost: 0,
          duplicateTasks: 0,
          acceptedAfterGivingUp: 0,
          duplicatedEffects: 0,
          seqGaps: 0,
          missingFromLog: 0,
          writes: 0,
          writesOnce: 0,
          writesLost: 0,
          writesDuplicated: 0,
        },
        failedRequests: 0,
        shedRequests: 0,
        failedByStatus: {},
        failureSamples: {},
        recoveryMs: null,
        recoveryMeaning: scenario.recoveryMeaning,
        drainMs: 0,
        notes: [],
        serviceErrors: {},
        error: (err as Error).message,
      });
      writeReport(startedAt, rows);
    }
  }
  const md = writeReport(startedAt, rows);
  process.stdout.write(`\n${md}\n`);
  process.exit(rows.some((r) => r.error) ? 1 : 0);
}

// Ctrl-C or a kill: exit through process.exit so the exit hooks (devstack, own-servers) stop
// every service and server this run started.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

await main();
