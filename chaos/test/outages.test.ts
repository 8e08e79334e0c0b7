// test-tier: e2e
// The NATS scenarios of `npm run chaos`, small (issue 14; docs/reliability.md): on servers of
// their own, every service a process, a load of every task kind. The report measures recovery;
// these fail when a guarantee breaks. Recovery bounds here are "it recovers at all", not figures.
import { ownServersAvailable } from "@tog/tests-e2e";
import { describe, expect, it } from "vitest";
import { expectNothingLost, runSmall } from "./expect-row.ts";

describe.skipIf(!ownServersAvailable())("chaos scenarios: NATS", () => {
  it("nats-restart: stopped, then paused with SIGSTOP; readiness 503 while away, nothing lost", async () => {
    const row = await runSmall("nats-restart");
    expectNothingLost(row);
    const f = row.figures!;
    // Samples every 250 ms while the server is away; the first may precede the probe noticing.
    expect(f.restartNotReady!).toBeGreaterThanOrEqual(f.restartSamples! / 2);
    expect(f.pauseNotReady!).toBeGreaterThanOrEqual(f.pauseSamples! / 2);
    expect(f.restartRecoveryMs!).toBeLessThan(30_000);
    expect(f.pauseRecoveryMs!).toBeLessThan(30_000);
  }, 300_000);

  it("nats-cluster-r3: one of three servers SIGKILLed under load; no request fails, nothing lost", async () => {
    const row = await runSmall("nats-cluster-r3");
    expectNothingLost(row);
    expect(row.notes.join(" ")).toContain("RUNS R3");
    expect(row.recoveryMs).not.toBeNull();
  }, 300_000);
});
