// test-tier: e2e
// The PostgreSQL scenarios of `npm run chaos`, small (docs/reliability.md "PostgreSQL"): a fast
// shutdown, and crashes that lose what the server held only in memory (claims not yet flushed,
// docs/decisions.md "The claim does not wait for the disk"). Whatever the crash undid, every
// accepted task completes once, with its events logged without a gap.
import { ownServersAvailable } from "@tog/tests-e2e";
import { describe, expect, it } from "vitest";
import { expectNothingLost, runSmall } from "./expect-row.ts";

describe.skipIf(!ownServersAvailable())("chaos scenarios: PostgreSQL", () => {
  it("postgres-restart: stopped and started under load; nothing lost", async () => {
    const row = await runSmall("postgres-restart");
    expectNothingLost(row);
    expect(row.recoveryMs).not.toBeNull();
  }, 300_000);

  it("postgres-crash: crashed under load right after claims; nothing lost, nothing done twice", async () => {
    const row = await runSmall("postgres-crash");
    expectNothingLost(row);
    const f = row.figures!;
    expect(f.crashes).toBe(3);
    expect(f.backMs!).toBeLessThan(30_000);
    expect(row.recoveryMs!).toBeLessThan(60_000);
  }, 300_000);
});
