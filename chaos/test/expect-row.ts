// What every scenario must leave behind, whatever its fault (docs/reliability.md "Guarantees"):
// nothing lost, nothing done twice, every event logged without a gap, no request failed.
import { expect } from "vitest";
import { runScenario, type Row } from "../src/run-scenario.ts";
import { SCENARIOS, type ChaosSettings } from "../src/scenarios.ts";

/** Small enough for the e2e tier (seconds per scenario), with every kind of task in the load. */
export const SMALL: ChaosSettings = {
  tasks: 30,
  rate: 10,
  workerTasks: 30,
  streamSubscribers: 20,
  rollingSubscribers: 10,
  natsPauseSeconds: 6,
};

export async function runSmall(name: string): Promise<Row> {
  const scenario = SCENARIOS.find((s) => s.name === name);
  if (!scenario) throw new Error(`no scenario ${name}`);
  const row = await runScenario(scenario, { settings: SMALL, drainSeconds: 90 });
  process.stdout.write(
    `[chaos e2e] ${name}: ${JSON.stringify({ verdict: row.verdict, figures: row.figures, notes: row.notes })}\n`,
  );
  return row;
}

export function expectNothingLost(row: Row): void {
  const v = row.verdict;
  expect(v.submitted).toBeGreaterThan(0);
  expect({
    notAccepted: v.refused,
    lost: v.lost,
    failed: v.failed,
    duplicateTasks: v.duplicateTasks,
    duplicatedEffects: v.duplicatedEffects,
    writesLost: v.writesLost,
    writesDuplicated: v.writesDuplicated,
    seqGaps: v.seqGaps,
    missingFromLog: v.missingFromLog,
    failedRequests: row.failedRequests,
  }).toEqual({
    notAccepted: 0,
    lost: 0,
    failed: 0,
    duplicateTasks: 0,
    duplicatedEffects: 0,
    writesLost: 0,
    writesDuplicated: 0,
    seqGaps: 0,
    missingFromLog: 0,
    failedRequests: 0,
  });
  expect(v.completed).toBe(v.submitted);
  // The load holds write tasks: their effect is counted, not merely absent.
  expect(v.writesOnce).toBe(v.writes);
}
